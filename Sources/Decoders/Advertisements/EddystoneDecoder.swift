import Bluetooth

/// Google Eddystone, service data UUID 0xFEAA (https://github.com/google/eddystone, protocol
/// specification): UID (0x00), URL (0x10), TLM (0x20, unencrypted version 0) and EID (0x30).
/// Multi-byte numbers are big-endian.
package struct EddystoneDecoder: AdvertisementDecoder {
    package let name = "eddystone"
    package let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0xFEAA)))

    /// The frame types decoded: UID, URL, TLM, EID.
    package var payloadMarkers: [PayloadMarker] { [0x00, 0x10, 0x20, 0x30].map { PayloadMarker([$0]) } }

    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/", ".com", ".org", ".edu", ".net", ".info",
        ".biz", ".gov",
    ]

    package init() {}

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let frame = try reader.uint8("frame_type")
        var fields: [DecodedField]
        switch frame {
        case 0x00:
            fields = [
                .string("frame", "uid"),
                .int("tx_power", try reader.int8("tx_power"), unit: "dBm"),
                .string("namespace", Hex.string(try reader.bytes(10, "namespace"))),
                .string("instance", Hex.string(try reader.bytes(6, "instance"))),
            ]
            // Two reserved bytes are optional on the air.
            if reader.remaining == 2 { try reader.skip(2, "reserved") }
        case 0x10:
            let power = try reader.int8("tx_power")
            let start = reader.offset
            let scheme = Int(try reader.uint8("url_scheme"))
            guard scheme < Self.schemes.count else {
                throw DecoderError(
                    .invalidValue, field: "url_scheme", offset: start, message: "reserved scheme \(scheme)")
            }
            var url = Self.schemes[scheme]
            while !reader.isAtEnd {
                let position = reader.offset
                let byte = try reader.uint8("url")
                if Int(byte) < Self.expansions.count {
                    url += Self.expansions[Int(byte)]
                } else if (0x21...0x7E).contains(byte) {
                    url.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    throw DecoderError(
                        .invalidValue, field: "url", offset: position,
                        message: "byte 0x\(Hex.string([byte])) is not a URL character")
                }
            }
            fields = [.string("frame", "url"), .int("tx_power", power, unit: "dBm"), .string("url", url)]
        case 0x20:
            let version = try reader.uint8("version")
            guard version == 0 else {
                throw DecoderError(
                    .unsupported, field: "version", offset: 1,
                    message: "encrypted TLM (version \(version)) needs the EID key")
            }
            let millivolts = try reader.uint16BE("battery_voltage")
            let temperature = try reader.int16BE("temperature")
            fields = [
                .string("frame", "tlm"),
                millivolts == 0
                    ? DecodedField(name: "battery_voltage", value: .null, unit: "V", kind: .voltage)
                    : .double(
                        "battery_voltage", Scale.decimal(Int64(millivolts), exponent: -3), unit: "V", kind: .voltage),
                temperature == Int16.min
                    ? DecodedField(name: "temperature", value: .null, unit: "°C", kind: .temperature)
                    : .double("temperature", Double(temperature) / 256, unit: "°C", kind: .temperature),
                .int("advertisement_count", try reader.uint32BE("advertisement_count"), kind: .counter),
                .double(
                    "uptime", Scale.decimal(Int64(try reader.uint32BE("uptime")), exponent: -1), unit: "s",
                    kind: .duration),
            ]
        case 0x30:
            fields = [
                .string("frame", "eid"),
                .int("tx_power", try reader.int8("tx_power"), unit: "dBm"),
                .string("ephemeral_id", Hex.string(try reader.bytes(8, "ephemeral_id"))),
            ]
        default:
            throw DecoderError(
                .unsupported, field: "frame_type", offset: 0, message: "unknown frame type 0x\(Hex.string([frame]))")
        }
        try reader.expectEnd(name)
        return fields
    }
}
