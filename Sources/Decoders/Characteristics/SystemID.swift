import Bluetooth

/// System ID (0x2A23), Device Information Service 1.1 §3.8: a 40-bit manufacturer-defined
/// identifier followed by a 24-bit organizationally unique identifier, both little-endian.
package struct SystemID: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A23))
    package let name = "system_id"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let manufacturer = try reader.unsigned(5, "manufacturer_identifier")
        let oui = try reader.uint24("organizationally_unique_identifier")
        try reader.expectEnd("system_id")
        let ouiBytes = [
            UInt8(truncatingIfNeeded: oui >> 16), UInt8(truncatingIfNeeded: oui >> 8), UInt8(truncatingIfNeeded: oui),
        ]
        return [
            .int("manufacturer_identifier", manufacturer),
            .string("organizationally_unique_identifier", Hex.string(ouiBytes, separator: ":").uppercased()),
        ]
    }
}
