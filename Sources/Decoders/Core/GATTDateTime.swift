/// The Bluetooth SIG Date Time characteristic layout (0x2A08): year, month, day, hours, minutes,
/// seconds; zero year/month/day mean "not known".
struct GATTDateTime: Sendable, Hashable {
    var year: UInt16
    var month: UInt8
    var day: UInt8
    var hours: UInt8
    var minutes: UInt8
    var seconds: UInt8

    init(from reader: inout ByteReader, field: String) throws(DecoderError) {
        let start = reader.offset
        year = try reader.uint16(field + ".year")
        month = try reader.uint8(field + ".month")
        day = try reader.uint8(field + ".day")
        hours = try reader.uint8(field + ".hours")
        minutes = try reader.uint8(field + ".minutes")
        seconds = try reader.uint8(field + ".seconds")
        let valid =
            (year == 0 || (1582...9999).contains(year)) && month <= 12 && day <= 31 && hours <= 23
            && minutes <= 59 && seconds <= 59
        guard valid else {
            throw DecoderError(.invalidValue, field: field, offset: start, message: "not a valid date and time")
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS` (local time of the device; the characteristic carries no zone).
    var iso8601: String {
        func pad(_ value: some BinaryInteger, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2))"
    }
}
