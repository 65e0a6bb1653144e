/// The gateway's two outgoing queues, each published by its own task in order (``Gateway/send(_:lane:)``).
///
/// Answers to device commands (`<base>/<device>/set|get`) wait in ``devices``; everything else the
/// gateway publishes through the queue (bridge request answers, `bridge/event`, `bridge/health`)
/// in ``bridge``. A client flooding devices with commands fills only its own lane: a bridge
/// request (Home Assistant asking for `devices`) is answered behind at most the bridge lane's
/// own backlog.
enum AnswerLane: Sendable, CaseIterable, Hashable {
    case bridge
    case devices

    /// Messages that may wait in the lane before `send` drops new ones (logged, throttled).
    var capacity: Int {
        switch self {
        case .bridge: 1_000
        case .devices: 10_000
        }
    }

    /// Publishes of the lane awaiting their PUBACK at once (``PublishSlots``): answers are
    /// pipelined instead of one per round trip. This is not what keeps the connection under the
    /// broker's Receive Maximum: libmosquitto does that for every publish of the connection (these
    /// lanes and the readings publisher's window of 64 alike), sending at most its send quota (the
    /// CONNACK Receive Maximum, 20 when the broker sends none) and queueing the rest, released one
    /// per PUBACK (`message__release_to_inflight`, 2.0.11). A stall once seen with 64 per lane was
    /// not reproduced: 7 runs of `CommandFloodTests` with 64 answered 12,055-15,418 of 20,000
    /// (the lane overflowing), 3 with 8 answered 11,273-13,098.
    static let window = 8
}
