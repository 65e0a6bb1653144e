#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The local time at the start of a log line written outside journald (which stamps lines itself):
/// `2026-12-01 18:05:24.123`.
package enum LogTimestamp {
    /// Now, from the real-time clock, in the local time zone.
    package static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return format(seconds: spec.tv_sec, milliseconds: Int(spec.tv_nsec / 1_000_000), utc: false)
    }

    /// `seconds` since 1970 as `YYYY-MM-DD HH:MM:SS.mmm`, in UTC or local time.
    package static func format(seconds: Int, milliseconds: Int, utc: Bool) -> String {
        var time = time_t(seconds)
        var parts = tm()
        if utc { gmtime_r(&time, &parts) } else { localtime_r(&time, &parts) }
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2)) "
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))"
    }
}
