import Foundation

/// The one ISO 8601 formatter (UTC): every payload's `ts` and the MQTT 5 sample-time property
/// (``iso8601(_:)``, `2026-11-30T01:44:43.123Z`, so the two agree to the millisecond), a device's
/// own clock in whole seconds (``iso8601(unixSeconds:)``, BTHome's timestamp object), and the
/// basic form for file names (``compact(_:)``, `20261130T014443Z`).
///
/// One rounding rule: the time to the nearest microsecond (what the outbox stores), then the
/// millisecond or second it falls in (down: a time is never shown later than it was). Rounding to
/// the microsecond first makes a time and the same time read back from the outbox show the same
/// millisecond: a `Double` holds a 2026 date only to about 0.24 µs, so `x.123` may come back as
/// `x.122999…`. Calendar arithmetic is done here (proleptic Gregorian), not by the C library.
package enum Timestamp {
    package static func iso8601(_ date: Date) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(24)
        appendISO8601(date, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// ``iso8601(_:)``'s UTF-8 bytes appended to `text`: every state payload's `ts` is written this
    /// way on the notification thread, straight into the payload (joining padded strings cost ~6 µs
    /// a reading, and a `String` of it an allocation more, issue 20).
    package static func appendISO8601(_ date: Date, to text: inout [UInt8]) {
        let milliseconds = floorDivide(microseconds(date), 1000)
        let seconds = floorDivide(milliseconds, 1000)
        let parts = CivilTime(seconds)
        guard (0...9999).contains(parts.year) else {
            text.append(contentsOf: (extended(seconds) + "." + pad(milliseconds - seconds * 1000, 3) + "Z").utf8)
            return
        }
        appendDigits(parts.year, 4, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(parts.month, 2, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(parts.day, 2, to: &text)
        text.append(UInt8(ascii: "T"))
        appendDigits(parts.hour, 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(parts.minute, 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(parts.second, 2, to: &text)
        text.append(UInt8(ascii: "."))
        appendDigits(milliseconds - seconds * 1000, 3, to: &text)
        text.append(UInt8(ascii: "Z"))
    }

    /// `value` (0 ≤ value < 10^width) as exactly `width` decimal digits.
    private static func appendDigits(_ value: Int64, _ width: Int, to text: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Whole seconds since 1970-01-01 UTC: `2023-05-14T16:41:17Z`.
    package static func iso8601(unixSeconds seconds: Int64) -> String {
        extended(seconds) + "Z"
    }

    /// The basic format, for names of files: `20261130T014443Z` (the second the time falls in).
    package static func compact(_ date: Date) -> String {
        let parts = CivilTime(floorDivide(microseconds(date), 1_000_000))
        return pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "T" + pad(parts.hour, 2)
            + pad(parts.minute, 2) + pad(parts.second, 2) + "Z"
    }

    /// `2026-11-30T01:44:43`, without a fraction or zone.
    private static func extended(_ seconds: Int64) -> String {
        let parts = CivilTime(seconds)
        return pad(parts.year, 4) + "-" + pad(parts.month, 2) + "-" + pad(parts.day, 2) + "T" + pad(parts.hour, 2)
            + ":" + pad(parts.minute, 2) + ":" + pad(parts.second, 2)
    }

    private static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Division rounding towards minus infinity (times before 1970 too).
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }

    /// A UTC date and time of day from seconds since 1970.
    private struct CivilTime {
        var year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64

        init(_ seconds: Int64) {
            let days = Timestamp.floorDivide(seconds, 86_400)
            let secondOfDay = seconds - days * 86_400
            // Civil date from a day count (proleptic Gregorian calendar, eras of 400 years).
            let shifted = days + 719_468
            let era = Timestamp.floorDivide(shifted, 146_097)
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
            hour = secondOfDay / 3600
            minute = secondOfDay / 60 % 60
            second = secondOfDay % 60
        }
    }
}
