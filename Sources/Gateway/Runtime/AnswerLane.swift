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
    /// pipelined instead of one per round trip, and both lanes together stay under libmosquitto's
    /// in-flight maximum (20, also mosquitto's default Receive Maximum). Above it libmosquitto
    /// 2.0.11 queues publishes itself, and with 64 per lane a flood of answers stalled there: 64
    /// awaiting a PUBACK that never came, every later answer (the bridge lane's too) stuck behind
    /// them (`CommandFloodTests`; with 8, 20,000 answers went out in order).
    static let window = 8
}
