/// Durations as people read them in log lines: `20ms`, `0.3s`, `2.5s`, `12s`, `4m05s`.
package enum LogDuration {
    /// Whole milliseconds below 0.1 s, tenths of a second below 10 s, whole seconds up to a
    /// minute, then minutes and seconds.
    package static func rounded(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if seconds == 0, attoseconds < 95_000_000_000_000_000 {
            return "\((attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000)ms"
        }
        let tenths =
            (seconds * 10 + attoseconds / 100_000_000_000_000_000
                + (attoseconds % 100_000_000_000_000_000 >= 50_000_000_000_000_000 ? 1 : 0))
        if tenths < 100 {
            return "\(tenths / 10).\(tenths % 10)s"
        }
        let whole = (tenths + 5) / 10
        if whole < 60 { return "\(whole)s" }
        let rest = whole % 60
        return "\(whole / 60)m" + (rest < 10 ? "0" : "") + "\(rest)s"
    }
}
