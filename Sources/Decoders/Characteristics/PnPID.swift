import Bluetooth

/// PnP ID (0x2A50), Device Information Service 1.1 §3.9: vendor id source, vendor id, product id,
/// product version.
package struct PnPID: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A50))
    package let name = "pnp_id"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let source = try reader.uint8("vendor_id_source")
        let sourceName: String
        switch source {
        case 1: sourceName = "bluetooth_sig"
        case 2: sourceName = "usb_implementers_forum"
        default:
            throw DecoderError(.invalidValue, field: "vendor_id_source", offset: 0, message: "reserved value \(source)")
        }
        let fields: [DecodedField] = [
            .string("vendor_id_source", sourceName),
            .int("vendor_id", try reader.uint16("vendor_id")),
            .int("product_id", try reader.uint16("product_id")),
            .int("product_version", try reader.uint16("product_version")),
        ]
        try reader.expectEnd("pnp_id")
        return fields
    }
}
