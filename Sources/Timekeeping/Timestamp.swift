import Foundation

/// ISO 8601 UTC timestamps with milliseconds (`2026-11-30T01:44:43.123Z`): every payload's `ts`
/// and the MQTT 5 sample-time property, so the two agree to the millisecond.
///
/// One rounding rule: the time to the nearest microsecond (what the outbox stores), then the
/// millisecond it falls in (down: a time is never shown later than it was). Rounding to the
/// microsecond first makes a time and the same time read back from the outbox show the same
/// millisecond: a `Double` holds a 2026 date only to about 0.24 µs, so `x.123` may come back as
/// `x.122999…`.
public enum Timestamp {
    public static func iso8601(_ date: Date) -> String {
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let totalMilliseconds = floorDivide(microseconds, 1000)
        let milliseconds = Int32(totalMilliseconds - floorDivide(totalMilliseconds, 1000) * 1000)
        var seconds = time_t(floorDivide(totalMilliseconds, 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(milliseconds, 3))Z"
    }

    /// Division rounding towards minus infinity (times before 1970 too).
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}
