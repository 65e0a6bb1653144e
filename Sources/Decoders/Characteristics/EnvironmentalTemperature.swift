import Bluetooth

/// Temperature (0x2A6E), Environmental Sensing Service: sint16 in 0.01 °C; 0x8000 means
/// "value is not known" (decoded as `null`).
package struct EnvironmentalTemperature: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A6E))
    package let name = "temperature"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let raw = try reader.int16("temperature")
        try reader.expectEnd(name)
        let value: DecodedValue = raw == Int16.min ? .null : .double(Scale.decimal(Int64(raw), exponent: -2))
        return [DecodedField(name: "temperature", value: value, unit: "°C", kind: .temperature)]
    }
}
