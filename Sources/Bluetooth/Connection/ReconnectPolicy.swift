import Timekeeping

/// When to try connecting again after a failure or a disconnect: a pure value type, so the gateway and tests
/// can ask it without I/O.
///
/// - Transient errors (timeouts, disconnects, `le-connection-abort-by-local`, `InProgress`, BlueZ restarting, …)
///   are retried: the first retry after a random delay in `firstDelay` (1–5 s), then with exponential backoff
///   (`multiplier` per attempt) with random jitter, never longer than `maximumDelay` (60 s).
/// - Permanent errors (operation not supported, not permitted, pairing needed or refused, invalid parameters,
///   cancelled by the caller) are not retried.
///
/// Randomness is injected (`using:`) so tests are deterministic.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delay range of the first retry.
    public var firstDelay: ClosedRange<Duration>
    /// No delay is ever longer than this.
    public var maximumDelay: Duration
    /// Growth of the nominal delay per further failure.
    public var multiplier: Double
    /// Fraction (0…1) of the nominal delay taken off at random, so that many devices that failed together do not
    /// retry together.
    public var jitter: Double
    /// Give up after this many consecutive failures; nil retries forever.
    public var maximumAttempts: Int?

    public init(
        firstDelay: ClosedRange<Duration> = .seconds(1) ... .seconds(5), maximumDelay: Duration = .seconds(60),
        multiplier: Double = 2, jitter: Double = 0.25, maximumAttempts: Int? = nil
    ) {
        self.firstDelay = firstDelay
        self.maximumDelay = max(maximumDelay, firstDelay.upperBound)
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
        self.maximumAttempts = maximumAttempts
    }

    /// 1–5 s, ×2 per failure, 25 % jitter, at most 60 s, forever.
    public static let `default` = ReconnectPolicy()

    public enum Decision: Sendable, Hashable {
        case retry(after: Duration)
        case giveUp(BluetoothError.Code)

        public var delay: Duration? {
            if case .retry(let delay) = self { return delay }
            return nil
        }
    }

    /// Whether the policy retries after an error with `code` at all.
    public func retries(_ code: BluetoothError.Code) -> Bool { code.isTransient }

    /// The decision after the `attempt`-th consecutive failure (1 for the first), caused by `error`.
    public func decision(
        after error: BluetoothError, attempt: Int, using generator: inout some RandomNumberGenerator
    ) -> Decision {
        guard retries(error.code) else { return .giveUp(error.code) }
        if let maximumAttempts, attempt > maximumAttempts { return .giveUp(error.code) }
        return .retry(after: delay(attempt: attempt, using: &generator))
    }

    /// Same, with the system random number generator.
    public func decision(after error: BluetoothError, attempt: Int) -> Decision {
        var generator = SystemRandomNumberGenerator()
        return decision(after: error, attempt: attempt, using: &generator)
    }

    /// The delay before retry number `attempt` (1-based), jitter included.
    public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let low = firstDelay.lowerBound.inSeconds
        let high = firstDelay.upperBound.inSeconds
        let cap = maximumDelay.inSeconds
        if attempt <= 1 {
            return .seconds(low + (high - low) * Self.unit(&generator))
        }
        let exponent = Double(min(attempt - 1, 62))
        let nominal = min(cap, high * pow(multiplier, exponent))
        let jittered = nominal * (1 - jitter * Self.unit(&generator))
        return .seconds(min(cap, max(low, jittered)))
    }

    /// A uniform value in [0, 1) from the top 53 bits of one draw (no rejection loop, so any generator, even a
    /// constant one in tests, gives an answer).
    static func unit(_ generator: inout some RandomNumberGenerator) -> Double {
        Double(generator.next() >> 11) * 0x1p-53
    }

    /// `base` to the power `exponent` for a small non-negative integer exponent, without Foundation.
    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0, result < 1e12 {
            result *= base
            remaining -= 1
        }
        return result
    }
}
