/// Lets `burst` log lines through per ``interval`` and counts the ones held back in between, so a
/// flood of the same refusal costs `burst` lines an interval (pure; the caller passes the time).
package struct LogThrottle: Sendable {
    package let interval: Duration
    /// Lines let through within one interval (counted from the first of them).
    package let burst: Int
    private var windowStart: ContinuousClock.Instant?
    private var inWindow = 0
    private var held = 0

    package init(interval: Duration = .seconds(60), burst: Int = 1) {
        self.interval = interval
        self.burst = max(1, burst)
    }

    /// Whether ``admit(at:)`` would let a line through at `now` (nothing is counted).
    package func wouldAdmit(at now: ContinuousClock.Instant) -> Bool {
        guard let windowStart, now - windowStart < interval else { return true }
        return inWindow < burst
    }

    /// nil: do not log now (counted). Otherwise log now; the value is how many were held back since the last line.
    package mutating func admit(at now: ContinuousClock.Instant) -> Int? {
        if let windowStart, now - windowStart < interval {
            guard inWindow < burst else {
                held += 1
                return nil
            }
            inWindow += 1
        } else {
            windowStart = now
            inWindow = 1
        }
        defer { held = 0 }
        return held
    }
}
