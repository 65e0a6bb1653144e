import Bluetooth

/// RuuviTag data formats 5 ("RAWv2", https://docs.ruuvi.com/communication/bluetooth-advertisements/data-format-5-rawv2)
/// and 3 ("RAWv1", .../data-format-3-rawv1): manufacturer data of company 0x0499, big-endian.
/// In format 5 each field's "not available" value decodes as `null`; format 3 has no such value.
package struct RuuviTagDecoder: AdvertisementDecoder {
    package let name = "ruuvi"
    package let source = AdvertisementSource.manufacturerData(0x0499)

    package init() {}

    package func accepts(_ payload: [UInt8]) -> Bool { payload.first == 0x05 || payload.first == 0x03 }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let format = try reader.uint8("data_format")
        switch format {
        case 3: return try rawV1(&reader)
        case 5: return try rawV2(&reader)
        default:
            throw DecoderError(
                .unsupported, field: "data_format", offset: 0,
                message: "Ruuvi data format \(format), only 3 and 5 are decoded")
        }
    }

    /// Format 3: humidity in 0.5 %, temperature as sign and magnitude with a 1/100 fraction byte,
    /// pressure − 50 kPa, accelerations in mG, battery in mV; 14 bytes.
    private func rawV1(_ reader: inout ByteReader) throws(DecoderError) -> [DecodedField] {
        let humidity = try reader.uint8("humidity")
        let whole = try reader.uint8("temperature")
        let fraction = try reader.uint8("temperature_fraction")
        guard fraction <= 99 else {
            throw DecoderError(
                .invalidValue, field: "temperature_fraction", offset: 3, message: "\(fraction) is above 99 hundredths")
        }
        let hundredths = Int64(whole & 0x7F) * 100 + Int64(fraction)
        let pressure = try reader.uint16BE("pressure")
        var fields: [DecodedField] = [
            field("humidity", false, Scale.decimal(Int64(humidity), multiplier: 5, exponent: -1), "%", .humidity),
            field(
                "temperature", false, Scale.decimal(whole & 0x80 == 0 ? hundredths : -hundredths, exponent: -2), "°C",
                .temperature),
            field("pressure", false, Scale.decimal(Int64(pressure) + 50_000, exponent: -2), "hPa", .pressure),
        ]
        for axis in ["x", "y", "z"] {
            let raw = try reader.int16BE("acceleration_\(axis)")
            fields.append(
                field("acceleration_\(axis)", false, Scale.decimal(Int64(raw), exponent: -3), "g", .measurement))
        }
        let millivolts = try reader.uint16BE("battery_voltage")
        fields.append(field("battery_voltage", false, Scale.decimal(Int64(millivolts), exponent: -3), "V", .voltage))
        try reader.expectEnd(name)
        return fields
    }

    /// Format 5: 24 bytes; every field has a "not available" value.
    private func rawV2(_ reader: inout ByteReader) throws(DecoderError) -> [DecodedField] {
        let temperature = try reader.int16BE("temperature")
        let humidity = try reader.uint16BE("humidity")
        let pressure = try reader.uint16BE("pressure")
        var fields: [DecodedField] = [
            field(
                "temperature", temperature == Int16.min, Scale.decimal(Int64(temperature), multiplier: 5, exponent: -3),
                "°C", .temperature),
            field(
                "humidity", humidity == 0xFFFF, Scale.decimal(Int64(humidity), multiplier: 25, exponent: -4), "%",
                .humidity),
            field(
                "pressure", pressure == 0xFFFF, Scale.decimal(Int64(pressure) + 50_000, exponent: -2), "hPa", .pressure),
        ]
        for axis in ["x", "y", "z"] {
            let raw = try reader.int16BE("acceleration_\(axis)")
            fields.append(
                field(
                    "acceleration_\(axis)", raw == Int16.min, Scale.decimal(Int64(raw), exponent: -3), "g", .measurement
                ))
        }
        let power = try reader.uint16BE("power_info")
        let millivolts = power >> 5
        let txPower = power & 0x1F
        fields.append(
            field(
                "battery_voltage", millivolts == 0x7FF, Scale.decimal(Int64(millivolts) + 1600, exponent: -3), "V",
                .voltage))
        fields.append(
            txPower == 0x1F
                ? DecodedField(name: "tx_power", value: .null, unit: "dBm")
                : .int("tx_power", Int64(txPower) * 2 - 40, unit: "dBm"))
        let movement = try reader.uint8("movement_counter")
        fields.append(DecodedField(name: "movement_counter", value: movement == 0xFF ? .null : .int(Int64(movement))))
        let sequence = try reader.uint16BE("measurement_sequence")
        fields.append(
            DecodedField(name: "measurement_sequence", value: sequence == 0xFFFF ? .null : .int(Int64(sequence))))
        let mac = try reader.bytes(6, "mac")
        fields.append(
            DecodedField(
                name: "mac",
                value: mac == [UInt8](repeating: 0xFF, count: 6)
                    ? .null : .string(Hex.string(mac, separator: ":").uppercased())))
        try reader.expectEnd(name)
        return fields
    }

    private func field(_ name: String, _ missing: Bool, _ value: Double, _ unit: String, _ kind: FieldKind)
        -> DecodedField
    {
        DecodedField(name: name, value: missing ? .null : .double(value), unit: unit, kind: kind)
    }
}
