import Bluetooth

/// Qingping (ClearGrass) sensors, service data 0xFDCD: frame control (1; bit 6 an event
/// advertisement), device type (1, ``QingpingDecoder/models``), the device address (6, reversed),
/// then objects `id (1), length (1), data`, little-endian:
///
/// | id | length | field |
/// |---|---|---|
/// | 0x01 | 4 | temperature int16 0.1 °C, humidity uint16 0.1 % |
/// | 0x02 | 1 | battery %; 0xFF: externally powered (battery 100, `external_power`) |
/// | 0x04 | 1 | door: 0 open, 1 closed, 2 left open |
/// | 0x07 | 2 | pressure uint16 0.1 hPa |
/// | 0x08 | 4 | motion (1), illuminance uint24 lx (not in event advertisements) |
/// | 0x09 | 4 | illuminance uint32 lx |
/// | 0x0F | 1 | packet id |
/// | 0x11 | 1 | light |
/// | 0x12 | 4 | PM2.5, PM10 uint16 µg/m³ |
/// | 0x13 | 2 | CO2 uint16 ppm |
/// | 0x15 | 2 | VOC index uint16 (1–500) |
/// | 0x18 | 2 | hardware capabilities (a static bitmap) |
/// | 0x19 | 1 | noise dB |
///
/// When both 0x08 and 0x09 are present, the later one's illuminance is published. Any other
/// object is kept as `object_0x<id>` (hex). An object of a known id with another
/// length, or a repeated id, is `invalid_value` naming it; a cut object is `truncated`.
package struct QingpingDecoder: AdvertisementDecoder {
    package let name = "qingping"
    package let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0xFDCD)))

    /// Device type byte → model.
    package static let models: [UInt8: String] = [
        0x01: "CGG1", 0x04: "CGH1", 0x07: "CGG1", 0x09: "CGP1W", 0x0C: "CGD1", 0x0E: "CGDN1", 0x0F: "CGM1",
        0x10: "CGDK2", 0x12: "CGPR1", 0x15: "CGF1W", 0x16: "CGG1", 0x18: "CGP23W", 0x1E: "CGC1", 0x24: "CGDN1",
        0x26: "CGP23W", 0x33: "CGP22C", 0x4F: "CGG3", 0x52: "CGR1PC", 0x5D: "CGP22C", 0x62: "CGR1PC",
    ]

    /// The length each known object id must have.
    static let lengths: [UInt8: Int] = [
        0x01: 4, 0x02: 1, 0x04: 1, 0x07: 2, 0x08: 4, 0x09: 4, 0x0F: 1, 0x11: 1, 0x12: 4, 0x13: 2, 0x15: 2,
        0x18: 2, 0x19: 1,
    ]

    package init() {}

    /// The address, reversed, after the frame control and device type bytes (no marker for a
    /// device of unknown address: the two bytes before it vary by model and event).
    package func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker] {
        [PayloadMarker(offset: 2, address.bytes.reversed())]
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let control = try reader.uint8("frame_control")
        let type = try reader.uint8("device_type")
        let mac = try reader.bytes(6, "mac")
        let event = control & 0x40 != 0
        var fields: [DecodedField] = [
            .int("device_type", type), .string("mac", Hex.string(mac.reversed(), separator: ":").uppercased()),
            .bool("event", event),
        ]
        if let model = Self.models[type] { fields.insert(.string("model", model), at: 0) }
        var seen: Set<UInt8> = []
        while !reader.isAtEnd {
            let start = reader.offset
            let id = try reader.uint8("object_id")
            let label = "object_0x\(Hex.string([id]))"
            let length = Int(try reader.uint8(label))
            var data = ByteReader(try reader.bytes(length, label))
            guard let expected = Self.lengths[id] else {
                fields.append(.string(label, Hex.string(data.rest())))
                continue
            }
            guard length == expected, seen.insert(id).inserted else {
                throw DecoderError(
                    .invalidValue, field: label, offset: start,
                    message: length == expected ? "repeated" : "length \(length), expected \(expected)")
            }
            // Motion-with-illuminance (0x08) and illuminance (0x09) both give `illuminance`: the later wins.
            let decoded = try Self.object(id, &data, event: event, label: label, offset: start)
            fields.removeAll { field in decoded.contains { $0.name == field.name } }
            fields += decoded
        }
        return fields
    }

    private static func object(_ id: UInt8, _ data: inout ByteReader, event: Bool, label: String, offset: Int)
        throws(DecoderError) -> [DecodedField]
    {
        switch id {
        case 0x01:
            let temperature = try data.int16("temperature")
            let humidity = try data.uint16("humidity")
            return [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -1), unit: "°C", kind: .temperature),
                .double("humidity", Scale.decimal(Int64(humidity), exponent: -1), unit: "%", kind: .humidity),
            ]
        case 0x02:
            let battery = try data.uint8("battery")
            guard battery == 0xFF else { return [.int("battery", battery, unit: "%", kind: .battery)] }
            return [.int("battery", 100, unit: "%", kind: .battery), .bool("external_power", true)]
        case 0x04:
            let door = try data.uint8("door")
            guard door <= 2 else {
                throw DecoderError(.invalidValue, field: "door", offset: offset, message: "door state \(door)")
            }
            return [
                .bool("opening", door != 1, kind: .binary("door")),
                .bool("door_left_open", door == 2, kind: .binary("problem")),
            ]
        case 0x07:
            let pressure = try data.uint16("pressure")
            return [.double("pressure", Scale.decimal(Int64(pressure), exponent: -1), unit: "hPa", kind: .pressure)]
        case 0x08:
            let motion = try data.uint8("motion")
            let illuminance = try data.uint24("illuminance")
            // In an event advertisement the bytes after the motion byte are not a reading.
            var fields: [DecodedField] = [.bool("motion", motion != 0, kind: .binary("motion"))]
            if !event { fields.append(.int("illuminance", illuminance, unit: "lx", kind: .sensor("illuminance"))) }
            return fields
        case 0x09:
            return [.int("illuminance", try data.uint32("illuminance"), unit: "lx", kind: .sensor("illuminance"))]
        case 0x0F:
            return [.int("packet_id", try data.uint8("packet_id"))]
        case 0x11:
            return [.bool("light", try data.uint8("light") != 0, kind: .binary("light"))]
        case 0x12:
            let pm25 = try data.uint16("pm25")
            let pm10 = try data.uint16("pm10")
            return [
                .int("pm25", pm25, unit: "µg/m³", kind: .sensor("pm25")),
                .int("pm10", pm10, unit: "µg/m³", kind: .sensor("pm10")),
            ]
        case 0x13:
            return [.int("co2", try data.uint16("co2"), unit: "ppm", kind: .sensor("carbon_dioxide"))]
        case 0x15:
            return [.int("voc_index", try data.uint16("voc_index"), kind: .measurement)]
        case 0x18:
            return [.int("capabilities", try data.uint16("capabilities"))]
        case 0x19:
            return [.int("noise", try data.uint8("noise"), unit: "dB", kind: .sensor("sound_pressure"))]
        default:
            throw DecoderError(.unsupported, field: label, offset: offset, message: "no decoding for this object")
        }
    }
}
