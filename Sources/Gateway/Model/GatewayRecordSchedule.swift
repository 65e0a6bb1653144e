/// When the gateway record (shared-broker mode) is published: at once when its content changed
/// and the last one went out at least ``minimumInterval`` ago; otherwise once, at the end of that
/// interval, with the newest content. Pure: the gateway passes the time (its injected clock) and
/// arms one timer for a ``Action/wait(until:)``.
package struct GatewayRecordSchedule: Sendable {
    package enum Action: Sendable, Hashable {
        /// Publish this payload now (then call ``published(_:at:)``).
        case publish([UInt8])
        /// Call ``due(at:)`` at this instant (no timer is armed yet).
        case wait(until: ContinuousClock.Instant)
        /// Nothing to do: unchanged, or a timer is already armed.
        case none
    }

    package let minimumInterval: Duration
    /// The payload last published in this connection (nil: none yet).
    package private(set) var lastPayload: [UInt8]?
    private var lastInstant: ContinuousClock.Instant?
    /// The newest content waiting for the end of the interval (a timer is armed while non-nil).
    package private(set) var pending: [UInt8]?

    package init(minimumInterval: Duration = .seconds(1)) {
        self.minimumInterval = minimumInterval
    }

    /// The record's content now; says whether to publish it.
    package mutating func offer(_ payload: [UInt8], at now: ContinuousClock.Instant) -> Action {
        if payload == lastPayload {
            pending = nil  // changed and changed back within the interval: nothing to send
            return .none
        }
        if let lastInstant, now < lastInstant + minimumInterval {
            let armed = pending != nil
            pending = payload
            return armed ? .none : .wait(until: lastInstant + minimumInterval)
        }
        pending = nil
        return .publish(payload)
    }

    /// The timer armed by ``Action/wait(until:)`` fired.
    package mutating func due(at now: ContinuousClock.Instant) -> Action {
        guard let payload = pending else { return .none }
        pending = nil
        return offer(payload, at: now)
    }

    package mutating func published(_ payload: [UInt8], at now: ContinuousClock.Instant) {
        lastPayload = payload
        lastInstant = now
        pending = nil
    }

    /// A new broker connection: the next offer publishes at once, whatever was sent before.
    package mutating func reset() {
        lastPayload = nil
        lastInstant = nil
        pending = nil
    }
}
