import Bluetooth

/// Victron Energy Instant Readout: manufacturer data of company 0x02E1 (Victron's "extra
/// manufacturer data" description). After the company id: 0x10 (a product advertisement), one
/// byte not interpreted, the product id (2, little-endian), the record type (1), a data counter
/// (2, little-endian), the first byte of the device's advertisement key (1), then the record,
/// encrypted with AES-128-CTR under that key; the initial counter block is the data counter's two
/// bytes followed by 14 zero bytes.
///
/// The key is the device's own (VictronConnect: the product's settings → Product info →
/// Instant readout details → Show encryption data), configured as the device's `bind_key`. A
/// frame whose key byte is not the configured key's first byte is refused with
/// `decryption_failed` naming `bind_key`, before anything is decrypted: CTR has no
/// authentication tag, so that byte is the only check a wrong key can be caught by (one wrong key
/// in 256 passes it, and then decrypts to wrong values).
///
/// Record types decoded (``VictronRecord``): 0x01 solar charger, 0x02 battery monitor, 0x03
/// inverter, 0x04 DC-DC converter, 0x05 Smart Lithium, 0x08 AC charger, 0x09 Smart
/// BatteryProtect, 0x0A Lynx Smart BMS, 0x0D DC energy meter, 0x0F Orion XS. Other types are
/// refused as `unsupported` naming the type.
package struct VictronDecoder: AdvertisementDecoder {
    package let name = "victron"
    package static let companyID: UInt16 = 0x02E1
    package let source = AdvertisementSource.manufacturerData(VictronDecoder.companyID)
    /// The first byte of an Instant Readout entry (a product advertisement).
    package static let productAdvertisement: UInt8 = 0x10
    /// The bytes before the encrypted record.
    package static let headerCount = 8

    package init() {}

    /// A product advertisement with its whole header; a record shorter than its type's fields
    /// (even an empty one) is then refused as `truncated`.
    package func accepts(_ payload: [UInt8]) -> Bool {
        payload.count >= Self.headerCount && payload[0] == Self.productAdvertisement
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let kind = try reader.uint8("record_kind")
        guard kind == Self.productAdvertisement else {
            throw DecoderError(
                .unsupported, field: "record_kind", offset: 0,
                message: "0x\(Hex.string([kind])) is not an Instant Readout product advertisement (0x10)")
        }
        _ = try reader.uint8("reserved")
        let product = try reader.uint16("product_id")
        let typeCode = try reader.uint8("record_type")
        guard let type = VictronRecord(rawValue: typeCode) else {
            throw DecoderError(
                .unsupported, field: "record_type", offset: 4,
                message:
                    "Victron record type 0x\(Hex.string([typeCode])) is not decoded (0x01–0x05, 0x08–0x0A, 0x0D and 0x0F are)"
            )
        }
        let counter = try reader.bytes(2, "data_counter")
        let keyByte = try reader.uint8("key_check")
        let encrypted = try reader.bytes(payload.count - Self.headerCount, "encrypted_record")
        guard let key = context.bindKey else {
            throw DecoderError(
                .missingKey, field: "bind_key", offset: Self.headerCount,
                message: "the record is encrypted; configure the device's advertisement key as bind_key")
        }
        guard key.first == keyByte else {
            throw DecoderError(
                .decryptionFailed, field: "bind_key", offset: 7,
                message:
                    "wrong advertisement key: the frame expects a key starting with 0x\(Hex.string([keyByte])), the configured one starts with 0x\(Hex.string(Array(key.prefix(1))))"
            )
        }
        let record = try AESCTR.apply(encrypted, key: key, counter: Self.counterBlock(counter))
        let fields: [DecodedField] = [
            .string("model", type.model),
            .string("product_id", "0x" + Hex.string([UInt8(product >> 8), UInt8(product & 0xFF)]).uppercased()),
            .int("record_type", typeCode),
        ]
        return fields + (try type.fields(record))
    }

    /// The initial counter block: the frame's two data-counter bytes, then zeros.
    static func counterBlock(_ counter: [UInt8]) -> [UInt8] {
        counter + [UInt8](repeating: 0, count: 16 - counter.count)
    }

    /// An Instant Readout entry (without the company id) carrying `record` encrypted under `key`:
    /// for tests and simulated advertisers.
    package static func frame(
        type: UInt8, product: UInt16, counter: UInt16, record: [UInt8], key: [UInt8]
    ) throws(DecoderError) -> [UInt8] {
        let counterBytes = [UInt8(counter & 0xFF), UInt8(counter >> 8)]
        let encrypted = try AESCTR.apply(record, key: key, counter: counterBlock(counterBytes))
        return [productAdvertisement, 0x02, UInt8(product & 0xFF), UInt8(product >> 8), type] + counterBytes
            + [key.first ?? 0] + encrypted
    }
}
