/// Lets one log line through per ``interval`` and counts the ones held back in between, so a
/// flood of the same refusal costs one line a minute (pure; the caller passes the time).
public struct LogThrottle: Sendable {
    public let interval: Duration
    private var lastLogged: ContinuousClock.Instant?
    private var held = 0

    public init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// nil: do not log now (counted). Otherwise log now; the value is how many were held back since the last line.
    public mutating func admit(at now: ContinuousClock.Instant) -> Int? {
        if let lastLogged, now - lastLogged < interval {
            held += 1
            return nil
        }
        lastLogged = now
        defer { held = 0 }
        return held
    }
}
