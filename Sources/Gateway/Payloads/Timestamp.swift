import Foundation

/// ISO 8601 UTC timestamps with milliseconds (`2026-11-30T01:44:43.123Z`), as used in every
/// payload's `ts`.
public enum Timestamp {
    public static func iso8601(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let milliseconds = Int(((totalMilliseconds % 1000) + 1000) % 1000)
        var seconds = time_t((totalMilliseconds - Int64(milliseconds)) / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }
}
