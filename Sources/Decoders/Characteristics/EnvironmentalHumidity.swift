import Bluetooth

/// Humidity (0x2A6F), Environmental Sensing Service: uint16 in 0.01 %; 0xFFFF means "value is not
/// known" (decoded as `null`).
package struct EnvironmentalHumidity: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A6F))
    package let name = "humidity"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let raw = try reader.uint16("humidity")
        try reader.expectEnd(name)
        if raw != 0xFFFF, raw > 10_000 {
            throw DecoderError(.invalidValue, field: "humidity", offset: 0, message: "\(raw) is above 100.00 %")
        }
        let value: DecodedValue = raw == 0xFFFF ? .null : .double(Scale.decimal(Int64(raw), exponent: -2))
        return [DecodedField(name: "humidity", value: value, unit: "%", kind: .humidity)]
    }
}
