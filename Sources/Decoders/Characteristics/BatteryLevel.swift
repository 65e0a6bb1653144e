import Bluetooth

/// Battery Level (0x2A19), Battery Service 1.0 §3.1: uint8 percentage, 0–100.
package struct BatteryLevel: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A19))
    package let name = "battery_level"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let level = try reader.uint8("battery")
        guard level <= 100 else {
            throw DecoderError(.invalidValue, field: "battery", offset: 0, message: "\(level) % is above 100")
        }
        try reader.expectEnd("battery_level")
        return [.int("battery", level, unit: "%", kind: .battery)]
    }
}
