/// The Bluetooth SIG Date Time characteristic layout (0x2A08), used as the time stamp of Weight
/// Measurement (0x2A9D), Temperature Measurement (0x2A1C) and Blood Pressure Measurement (0x2A35):
/// year (uint16), month, day, hours, minutes, seconds. A zero year, month or day means "not
/// known".
struct GATTDateTime: Sendable, Hashable {
    var year: UInt16
    var month: UInt8
    var day: UInt8
    var hours: UInt8
    var minutes: UInt8
    var seconds: UInt8

    /// Reads the seven bytes and checks each part on its own: a year outside 1582–9999, a month
    /// above 12, a day the month does not have (30 February, 29 February of a common year), an
    /// hour above 23 or a minute or second above 59 is an `invalidValue` error naming that part
    /// (`timestamp.day`, …).
    init(from reader: inout ByteReader, field: String) throws(DecoderError) {
        let start = reader.offset
        year = try reader.uint16(field + ".year")
        month = try reader.uint8(field + ".month")
        day = try reader.uint8(field + ".day")
        hours = try reader.uint8(field + ".hours")
        minutes = try reader.uint8(field + ".minutes")
        seconds = try reader.uint8(field + ".seconds")
        func reject(_ part: String, _ offset: Int, _ message: String) -> DecoderError {
            DecoderError(.invalidValue, field: field + "." + part, offset: start + offset, message: message)
        }
        guard year == 0 || (1582...9999).contains(year) else { throw reject("year", 0, "\(year) is not 1582–9999") }
        guard month <= 12 else { throw reject("month", 2, "\(month) is not a month") }
        if day > Self.daysIn(month: month, year: year) {
            let monthName = month == 0 ? "any month" : Self.monthNames[Int(month) - 1]
            let which = month == 0 || year == 0 ? monthName : "\(monthName) \(year)"
            throw reject("day", 3, "\(day) is not a day of \(which)")
        }
        guard hours <= 23 else { throw reject("hours", 4, "\(hours) is not an hour") }
        guard minutes <= 59 else { throw reject("minutes", 5, "\(minutes) is not a minute") }
        guard seconds <= 59 else { throw reject("seconds", 6, "\(seconds) is not a second") }
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    /// The most days `month` can have; an unknown month (0) allows 31, an unknown year (0) allows
    /// 29 February.
    static func daysIn(month: UInt8, year: UInt16) -> UInt8 {
        switch month {
        case 4, 6, 9, 11: return 30
        case 2:
            guard year != 0 else { return 29 }
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        default: return 31
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS` (local time of the device; the characteristic carries no zone), or
    /// null when the year, month or day is not known: a partial date has no ISO 8601 form a
    /// consumer could compare, and a made-up `0000-00-00` would be read as a real date.
    var decodedValue: DecodedValue {
        guard year != 0, month != 0, day != 0 else { return .null }
        func pad(_ value: some BinaryInteger, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return .string(
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2))")
    }
}
