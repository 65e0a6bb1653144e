/// The one conversion of a `Duration` to plain numbers; nothing else reads its `components`.
extension Duration {
    /// The duration in seconds, with its fraction (for rates, ages in seconds and `Date`
    /// arithmetic).
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds, rounded towards zero (for C APIs that take them).
    package var inMilliseconds: Int64 { whole(1_000) }

    /// The duration in whole microseconds, rounded towards zero (sd_notify's `…_USEC` values,
    /// the outbox's stored times).
    package var inMicroseconds: Int64 { whole(1_000_000) }

    /// The duration in whole nanoseconds, rounded towards zero (`DispatchTime` deadlines).
    package var inNanoseconds: Int64 { whole(1_000_000_000) }

    /// Whole `1 / perSecond` units, rounded towards zero; clamped to `Int64`'s range (a duration
    /// of more than 292 years in nanoseconds).
    private func whole(_ perSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / (1_000_000_000_000_000_000 / perSecond))
        guard !overflowAgain else { return seconds < 0 ? .min : .max }
        return sum
    }
}
