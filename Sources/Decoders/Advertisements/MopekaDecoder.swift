import Bluetooth

/// Mopeka Pro tank sensors (ultrasonic level under a propane bottle or tank): manufacturer data of
/// company 0x0059 from an advertiser listing service 0xFEE5, 10 bytes after the company id:
/// device type (1), battery (1, 1/32 V), temperature (1: bits 0–6 °C + 40, bit 7 the sync button),
/// tank level (2, little-endian: bits 0–13 the raw echo level, bits 14–15 the reading quality
/// 0–3), the last three address bytes (3), accelerometer x and y (1 each).
///
/// `tank_level` is the level in mm for propane: raw × (0.573045 − 0.002822 t − 0.00000535 t²)
/// with t the temperature byte (°C + 40), truncated to whole mm, published only when the reading
/// quality is at least 1. `battery` is (V − 2.2) / 0.65 as a percentage, clamped to 0–100 and
/// rounded to 0.1.
package struct MopekaDecoder: AdvertisementDecoder {
    package let name = "mopeka"
    package static let service = BluetoothUUID(UInt16(0xFEE5))
    package let source = AdvertisementSource.anyManufacturerData
    package static let companyID: UInt16 = 0x0059

    /// Device type → model and product name.
    package static let models: [UInt8: (model: String, product: String)] = [
        0x03: ("M1017", "Pro Check"), 0x04: ("Pro-200", "Pro-200"), 0x05: ("Pro H20", "Pro Check H2O"),
        0x06: ("M1017", "Lippert BottleCheck"), 0x08: ("M1015", "Pro Plus"),
        0x09: ("M1015", "Pro Plus with Cellular"), 0x0A: ("TD40/TD200", "TD40/TD200"),
        0x0B: ("TD40/TD200", "TD40/TD200 with Cellular"), 0x0C: ("M1017", "Pro Check Universal"),
        0x12: ("Pro-200", "Pro-200B"),
    ]

    package init() {}

    /// Only from an advertiser listing ``service``: the company-id bytes alone do not identify the format.
    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        context.serviceUUIDs.contains(Self.service) && accepts(payload)
    }

    package func accepts(_ payload: [UInt8]) -> Bool {
        payload.count == 12 && payload[0] == 0x59 && payload[1] == 0x00 && Self.models[payload[2]] != nil
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let company = try reader.uint16("company_id")
        guard company == Self.companyID else {
            throw DecoderError(
                .unsupported, field: "company_id", offset: 0,
                message:
                    "company 0x\(Hex.string([UInt8(company >> 8), UInt8(company & 0xFF)])) is not Mopeka's (0x0059)")
        }
        let type = try reader.uint8("device_type")
        guard let model = Self.models[type] else {
            throw DecoderError(.unsupported, field: "device_type", offset: 2, message: "Mopeka device type \(type)")
        }
        let battery = try reader.uint8("battery")
        let temperatureByte = try reader.uint8("temperature")
        let level = try reader.uint16("tank_level")
        let address = try reader.bytes(3, "mac_suffix")
        let accelerometerX = try reader.uint8("accelerometer_x")
        let accelerometerY = try reader.uint8("accelerometer_y")
        try reader.expectEnd(name)
        let volts = Double(battery) / 32
        let percent = (min(100, max(0, (volts - 2.2) / 0.65 * 100)) * 10).rounded() / 10
        let t = Double(temperatureByte & 0x7F)
        let raw = level & 0x3FFF
        let quality = level >> 14
        var fields: [DecodedField] = [
            .string("model", model.model), .string("product", model.product), .int("device_type", type),
            .double("battery", percent, unit: "%", kind: .battery),
            .double("battery_voltage", volts, unit: "V", kind: .voltage),
            .int("temperature", Int(temperatureByte & 0x7F) - 40, unit: "°C", kind: .temperature),
            .bool("button_pressed", temperatureByte & 0x80 != 0, kind: .binary("occupancy")),
            .int("tank_level_raw", raw),
        ]
        if quality >= 1 {
            let millimetres = Int(Double(raw) * (0.573045 + (-0.002822 * t) + (-0.00000535 * (t * t))))
            fields.append(.int("tank_level", millimetres, unit: "mm", kind: .distance))
        }
        fields += [
            .int("reading_quality", Int((Double(quality) / 3 * 100).rounded()), unit: "%", kind: .measurement),
            .int("reading_quality_raw", quality),
            .string("mac_suffix", Hex.string(address, separator: ":").uppercased()),
            .int("accelerometer_x", accelerometerX), .int("accelerometer_y", accelerometerY),
        ]
        return fields
    }
}
