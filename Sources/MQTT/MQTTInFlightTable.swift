/// Matches publishes with their acknowledgements by message id, whichever arrives first.
///
/// The publishing task registers after `mosquitto_publish_v5` returned the id; the network thread
/// reports the PUBACK/PUBCOMP (or, for QoS 0, "written") for that id, possibly earlier. Each side
/// arrives once per id; the second arrival resolves. Guarded by a mutex in
/// ``MosquittoCallbackContext`` so acknowledgements resume their waiters straight from the network
/// thread, without a hop through the client actor. Pure and generic so it is unit-tested with
/// plain values as waiters.
///
/// Message ids are 16-bit, so the state of every id lives in a flat 64 K array: the QoS 0 path
/// (one write per side) never hashes or allocates.
struct MQTTInFlightTable<Waiter> {
    private enum State: UInt8 {
        case none
        /// A QoS 0 publish whose "written" report has not come yet; it resolves no one.
        case unobserved
        /// A QoS 1/2 publish waiting in `waiters`.
        case waiting
        /// Reported before its publisher arrived; the reason code is in `reasonCodes`.
        case acknowledged
        /// A QoS 1/2 publish whose caller stopped waiting: its acknowledgement (which may come
        /// after a reconnect) resolves no one.
        case abandoned
    }

    private var states = [State](repeating: .none, count: 65536)
    private var waiters: [Int32: Waiter] = [:]
    /// Reason codes of `.acknowledged` ids (MQTT reason codes fit in a byte).
    private var reasonCodes = [UInt8](repeating: 0, count: 65536)
    /// QoS 0 ids that arrived while a QoS 1/2 publish with the same (wrapped) id was waiting.
    private var collisions: [Int32: Int] = [:]
    /// After ``close()``: new waiters fail at once.
    private(set) var isClosed = false

    /// Number of QoS 1/2 publishes waiting for their acknowledgement.
    var waitingCount: Int { waiters.count }

    init() {}

    enum Arrival: Equatable {
        /// Wait: the acknowledgement will resolve the waiter.
        case wait
        /// Already acknowledged with this reason code: resolve now.
        case resolved(reasonCode: Int32)
        /// The table is closed (the client stopped): fail now.
        case closed
    }

    /// The publisher arrives for `mid`; `waiter` is nil for QoS 0.
    mutating func publisherArrived(mid: Int32, waiter: Waiter?) -> Arrival {
        let index = Int(UInt16(truncatingIfNeeded: mid))
        guard let waiter else {
            switch states[index] {
            case .acknowledged:
                states[index] = .none
            case .waiting: collisions[mid, default: 0] += 1
            case .unobserved, .none, .abandoned: states[index] = .unobserved
            }
            return .wait
        }
        if isClosed { return .closed }
        if states[index] == .acknowledged {
            states[index] = .none
            return .resolved(reasonCode: Int32(reasonCodes[index]))
        }
        states[index] = .waiting
        waiters[mid] = waiter
        return .wait
    }

    /// The network thread reports the acknowledgement of `mid`; returns the waiter to resume.
    mutating func acknowledgementArrived(mid: Int32, reasonCode: Int32) -> Waiter? {
        let index = Int(UInt16(truncatingIfNeeded: mid))
        switch states[index] {
        case .unobserved, .abandoned:
            states[index] = .none
            return nil
        case .waiting:
            if let count = collisions[mid] {
                collisions[mid] = count > 1 ? count - 1 : nil
                return nil
            }
            states[index] = .none
            return waiters.removeValue(forKey: mid)
        case .none, .acknowledged:
            states[index] = .acknowledged
            reasonCodes[index] = UInt8(truncatingIfNeeded: reasonCode)
            return nil
        }
    }

    /// The caller gave up on `mid` (task cancelled); returns its waiter to fail.
    mutating func cancel(mid: Int32) -> Waiter? {
        let index = Int(UInt16(truncatingIfNeeded: mid))
        guard states[index] == .waiting, let waiter = waiters.removeValue(forKey: mid) else { return nil }
        states[index] = .abandoned
        collisions[mid] = nil
        return waiter
    }

    /// A new connection begins: QoS 0 packets of the old one were discarded unsent, so their
    /// reports will never come. QoS 1/2 waiters stay (libmosquitto re-sends those messages).
    mutating func connectionReset() {
        for index in states.indices where states[index] == .unobserved { states[index] = .none }
        collisions = [:]
    }

    /// The client stopped: returns every waiter to fail; later waiters fail at once.
    mutating func close() -> [Waiter] {
        isClosed = true
        let all = Array(waiters.values)
        waiters = [:]
        collisions = [:]
        for index in states.indices { states[index] = .none }
        return all
    }
}
