/// Delays between reconnect attempts: exponential from a minimum to a maximum, with jitter,
/// reset when a connection is accepted. A pure value type, unit-tested without I/O.
struct MQTTReconnectBackoff: Sendable, Equatable {
    let minimum: Duration
    let maximum: Duration
    /// Failed attempts since the last accepted connection.
    private(set) var failures: Int = 0

    init(minimum: Duration, maximum: Duration) {
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The delay before the next attempt after one more failure; `jitter` in 0...1 scales the
    /// delay into [½·d, d] so that many gateways do not reconnect in lockstep.
    mutating func nextDelay(jitter: Double) -> Duration {
        let exponent = min(failures, 30)
        failures += 1
        var delay = minimum * (1 << exponent)
        if delay > maximum || delay < .zero { delay = maximum }
        let scale = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return max(minimum / 2, delay * scale)
    }

    /// A connection was accepted: the next failure starts from the minimum again.
    mutating func reset() { failures = 0 }
}
