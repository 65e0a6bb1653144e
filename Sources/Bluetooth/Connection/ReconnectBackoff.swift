/// Counts consecutive failures of one peripheral and asks its `ReconnectPolicy` what to do next.
///
/// ```swift
/// var backoff = ReconnectBackoff(policy: .default)
/// // on failure:
/// switch backoff.next(after: error) { case .retry(let delay): sleep delay, connect; case .giveUp: stop }
/// // on success:
/// backoff.reset()
/// ```
public struct ReconnectBackoff: Sendable, Hashable {
    public var policy: ReconnectPolicy
    /// Consecutive failures since the last success.
    public private(set) var failures: Int = 0

    public init(policy: ReconnectPolicy = .default) {
        self.policy = policy
    }

    /// Records a failure and returns the decision for it.
    public mutating func next(
        after error: BluetoothError, using generator: inout some RandomNumberGenerator
    ) -> ReconnectPolicy.Decision {
        failures += 1
        return policy.decision(after: error, attempt: failures, using: &generator)
    }

    /// Same, with the system random number generator.
    public mutating func next(after error: BluetoothError) -> ReconnectPolicy.Decision {
        var generator = SystemRandomNumberGenerator()
        return next(after: error, using: &generator)
    }

    /// A connection succeeded: the next failure starts again at the first delay.
    public mutating func reset() { failures = 0 }
}
