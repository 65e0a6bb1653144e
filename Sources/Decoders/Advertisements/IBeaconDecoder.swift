import Bluetooth

/// Apple iBeacon: manufacturer data of company 0x004C starting `02 15`, then the proximity UUID
/// (16 bytes), major and minor (big-endian uint16) and the measured power at 1 m (int8, dBm).
package struct IBeaconDecoder: AdvertisementDecoder {
    package let name = "ibeacon"
    package let source = AdvertisementSource.manufacturerData(0x004C)

    package init() {}

    package func accepts(_ payload: [UInt8]) -> Bool {
        payload.count >= 2 && payload[0] == 0x02 && payload[1] == 0x15
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let type = try reader.uint8("type")
        guard type == 0x02 else {
            throw DecoderError(
                .unsupported, field: "type", offset: 0,
                message: "Apple data type 0x\(Hex.string([type])) is not iBeacon (0x02)")
        }
        let length = try reader.uint8("length")
        guard length == 0x15 else {
            throw DecoderError(
                .invalidValue, field: "length", offset: 1, message: "iBeacon length is 21, got \(length)")
        }
        let uuid = try reader.bytes(16, "uuid")
        let fields: [DecodedField] = [
            .string("uuid", Self.uuidString(uuid)),
            .int("major", try reader.uint16BE("major")),
            .int("minor", try reader.uint16BE("minor")),
            .int("measured_power", try reader.int8("measured_power"), unit: "dBm"),
        ]
        try reader.expectEnd(name)
        return fields
    }

    /// `8-4-4-4-12` lowercase text of 16 big-endian bytes.
    static func uuidString(_ bytes: [UInt8]) -> String {
        let hex = Array(Hex.string(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }
}
