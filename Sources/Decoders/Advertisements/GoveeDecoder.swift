import Bluetooth

/// Govee thermo-hygrometers: manufacturer data whose "company id" is Govee's own tag (0xEC88,
/// 0x0001 or 0x8801), told apart by that tag and the entry's length (and, for the 6-byte 0x0001
/// frames, the advertised name). Two encodings:
///
/// - **packed** (H5072, H5075, H5100–H5105, H5108, H5110, H5174, H5177, H5178, GV5179): three
///   bytes big-endian; bit 23 is the sign, the other 23 bits hold `temperature × 10000 +
///   humidity × 10` (temperature in 0.1 °C above the thousands, humidity in 0.1 % below). The
///   battery byte follows: percent in bits 0–6, bit 7 set when the sensor reports an error.
/// - **little-endian pairs** (H5074, H5051, H5052, H5071, H5179): int16 temperature in 0.01 °C,
///   uint16 humidity in 0.01 %, uint8 battery %.
///
/// A packed reading with the error bit set, or a temperature outside −40…100 °C (the sensors'
/// range; a corrupt frame gives hundreds of degrees), has `temperature` and `humidity` null and
/// `sensor_error` true. The payload starts with the two company-id bytes
/// (``AdvertisementSource/anyManufacturerData``).
package struct GoveeDecoder: AdvertisementDecoder {
    package let name = "govee"
    package let source = AdvertisementSource.anyManufacturerData

    package init() {}

    /// The frame layouts, by company id and entry length (without the company-id bytes).
    enum Frame: Equatable {
        /// Skip, packed value, battery, then `trailing` bytes.
        case packed(lead: Int, trailing: Int, model: String)
        /// Skip `lead`, int16 LE temperature, uint16 LE humidity, uint8 battery, then `trailing` bytes.
        case pairs(lead: Int, trailing: Int, model: String)
        /// H5178: skip 2, sensor id (0 primary, 1 remote), packed, battery, 2 bytes.
        case outdoor
        /// A meat thermometer (``GoveeMeatThermometer``).
        case meat(GoveeMeatThermometer)
    }

    static let companyEC88: UInt16 = 0xEC88
    static let company0001: UInt16 = 0x0001
    static let company8801: UInt16 = 0x8801

    /// The frame for a company id, entry length and local name; nil when it is not a Govee frame.
    static func frame(company: UInt16, length: Int, localName: String?) -> Frame? {
        let name = localName ?? ""
        switch (company, length) {
        case (companyEC88, 6): return .packed(lead: 1, trailing: 1, model: model(in: name) ?? "H5072/H5075")
        case (companyEC88, 7): return .pairs(lead: 1, trailing: 1, model: "H5074")
        case (companyEC88, 9): return .pairs(lead: 1, trailing: 3, model: model(in: name) ?? "H5051")
        case (company0001, 6):
            // Nokia's real company id: only with a Govee model in the name.
            guard let model = model(in: name) else { return nil }
            return .packed(lead: 2, trailing: 0, model: model)
        case (company0001, 8): return .packed(lead: 2, trailing: 2, model: "H5108")
        case (company0001, 9): return .outdoor
        case (company8801, 9): return .pairs(lead: 4, trailing: 0, model: "H5179")
        default: return GoveeMeatThermometer.model(company: company, length: length, name: name).map { .meat($0) }
        }
    }

    /// The model in a Govee name such as `GVH5075_1A2B`, `Govee_H5074_1A2B` (`H5075`, `H5074`),
    /// `B5178_…` (`H5178`) or `GV5179_…` (`GV5179`): a letter H or B, or GV, and four digits from 5.
    static func model(in name: String) -> String? {
        let characters = Array(name.utf8)
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        for start in characters.indices where start + 5 <= characters.count {
            let digits = characters[start + 1..<start + 5]
            guard digits.first == UInt8(ascii: "5"), digits.allSatisfy(digit.contains) else { continue }
            let number = String(decoding: digits, as: UTF8.self)
            switch characters[start] {
            case UInt8(ascii: "H"), UInt8(ascii: "B"): return "H" + number
            case UInt8(ascii: "V") where start > 0 && characters[start - 1] == UInt8(ascii: "G"): return "GV" + number
            default: continue
            }
        }
        return nil
    }

    package func accepts(_ payload: [UInt8]) -> Bool { accepts(payload, context: AdvertisementContext()) }

    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        guard payload.count >= 2 else { return false }
        let company = UInt16(payload[0]) | UInt16(payload[1]) << 8
        return Self.frame(company: company, length: payload.count - 2, localName: context.localName) != nil
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let company = try reader.uint16("company_id")
        guard let frame = Self.frame(company: company, length: reader.remaining, localName: context.localName) else {
            throw DecoderError(
                .unsupported, field: "company_id", offset: 0,
                message:
                    "no Govee frame of \(reader.remaining) byte(s) for tag 0x\(Hex.string([UInt8(company >> 8), UInt8(company & 0xFF)]))"
            )
        }
        var fields: [DecodedField]
        switch frame {
        case .packed(let lead, let trailing, let model):
            try reader.skip(lead, "header")
            fields = try Self.packedReading(&reader)
            try reader.skip(trailing, "reserved")
            fields.append(.string("model", model))
        case .pairs(let lead, let trailing, let model):
            try reader.skip(lead, "header")
            let temperature = try reader.int16("temperature")
            let humidity = try reader.uint16("humidity")
            let battery = try reader.uint8("battery")
            try reader.skip(trailing, "reserved")
            fields = [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -2), unit: "°C", kind: .temperature),
                .double("humidity", Scale.decimal(Int64(humidity), exponent: -2), unit: "%", kind: .humidity),
                .int("battery", battery, unit: "%", kind: .battery),
                .string("model", model),
            ]
        case .outdoor:
            try reader.skip(2, "header")
            let sensor = try reader.uint8("sensor_id")
            fields = try Self.packedReading(&reader)
            try reader.skip(2, "reserved")
            fields.append(.string("sensor", sensor == 0 ? "primary" : sensor == 1 ? "remote" : "unknown"))
            fields.append(.int("sensor_id", sensor))
            fields.append(.string("model", "H5178"))
        case .meat(let thermometer):
            fields = try thermometer.fields(&reader)
        }
        try reader.expectEnd(name)
        return fields
    }

    /// The packed temperature/humidity (3 bytes) and the battery byte.
    static func packedReading(_ reader: inout ByteReader) throws(DecoderError) -> [DecodedField] {
        let packed = UInt32(try reader.unsigned(3, bigEndian: true, "temperature_humidity"))
        let battery = try reader.uint8("battery")
        let value = GoveePackedValue(packed)
        let error = battery & 0x80 != 0 || !(-400...1000).contains(value.temperatureTenths)
        return [
            error
                ? DecodedField(name: "temperature", value: .null, unit: "°C", kind: .temperature)
                : .double(
                    "temperature", Scale.decimal(value.temperatureTenths, exponent: -1), unit: "°C", kind: .temperature),
            error
                ? DecodedField(name: "humidity", value: .null, unit: "%", kind: .humidity)
                : .double("humidity", Scale.decimal(value.humidityTenths, exponent: -1), unit: "%", kind: .humidity),
            .int("battery", battery & 0x7F, unit: "%", kind: .battery),
            .bool("sensor_error", error, kind: .binary("problem")),
        ]
    }
}

/// Govee's packed 24-bit reading: bit 23 the sign of the temperature, bits 0–22 the magnitude
/// `t × 1000 + h` with `t` the temperature and `h` the humidity, both in tenths.
struct GoveePackedValue: Equatable {
    var temperatureTenths: Int64
    var humidityTenths: Int64

    init(_ raw: UInt32) {
        let magnitude = Int64(raw & 0x7F_FFFF)
        let temperature = magnitude / 1000
        temperatureTenths = raw & 0x80_0000 != 0 ? -temperature : temperature
        humidityTenths = magnitude % 1000
    }
}
