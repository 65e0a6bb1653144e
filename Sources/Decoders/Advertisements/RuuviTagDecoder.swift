import Bluetooth

/// RuuviTag data format 5 ("RAWv2", https://docs.ruuvi.com/communication/bluetooth-advertisements/data-format-5-rawv2):
/// manufacturer data of company 0x0499, 24 bytes, big-endian. Each field's "not available" value
/// decodes as `null`.
public struct RuuviTagDecoder: AdvertisementDecoder {
    public let name = "ruuvi"
    public let source = AdvertisementSource.manufacturerData(0x0499)

    public init() {}

    public func accepts(_ payload: [UInt8]) -> Bool { payload.first == 0x05 }

    public func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let format = try reader.uint8("data_format")
        guard format == 5 else {
            throw DecoderError(
                .unsupported, field: "data_format", offset: 0, message: "Ruuvi data format \(format), only 5 is decoded"
            )
        }
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
