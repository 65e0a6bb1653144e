import Timekeeping

/// A token bucket: `rate` tokens per second, at most `burst` saved up. Pure: time is passed in.
package struct TokenBucket: Sendable, Hashable {
    package let rate: Double
    package let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant?

    /// `rate` per second; `burst` defaults to one second's worth (at least 1).
    package init(rate: Double, burst: Double? = nil) {
        self.rate = rate
        self.burst = max(1, burst ?? rate)
        self.tokens = self.burst
    }

    /// Takes one token if there is one.
    package mutating func take(at now: ContinuousClock.Instant) -> Bool {
        if let last {
            let elapsed = (now - last).inSeconds
            tokens = min(burst, tokens + max(0, elapsed) * rate)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
