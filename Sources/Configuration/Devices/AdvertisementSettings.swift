import Bluetooth
import ByteLayouts

/// `devices[].advertisement`: decode what the device advertises (no connection needed), with a
/// built-in decoder or a user-defined layout applied to one service-data or manufacturer-data entry.
package struct AdvertisementSettings: Sendable, Equatable {
    /// Where a layout finds its bytes in the advertisement.
    package enum LayoutSource: Sendable, Hashable {
        /// Manufacturer data of this company id (the bytes after the two id bytes).
        case manufacturerData(UInt16)
        /// Every manufacturer-data entry, each read from its two company-id bytes (little-endian, as
        /// sent), for formats that put data there (`"manufacturer_id": "any"`).
        case anyManufacturerData
        /// Service data of this service UUID.
        case serviceData(BluetoothUUID)
    }

    /// Decoder name, e.g. `bthome`, `ibeacon`; nil when `layout` decodes instead.
    package var decoder: String?
    /// AES key for encrypted advertisements (BTHome v2), 16 bytes.
    package var bindKey: [UInt8]?
    /// A user-defined layout and the advertisement entry it reads.
    package var layout: ByteLayout?
    package var layoutSource: LayoutSource?

    package init(
        decoder: String?, bindKey: [UInt8]? = nil, layout: ByteLayout? = nil, layoutSource: LayoutSource? = nil
    ) {
        self.decoder = decoder
        self.bindKey = bindKey
        self.layout = layout
        self.layoutSource = layoutSource
    }

    static let keys = ["decoder", "bind_key", "layout", "manufacturer_id", "service_data"]
}

extension AdvertisementSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let name = try reader.decoderName("decoder")
        layout = try reader.layout("layout")
        let anyCompany = try Self.anyCompany(reader)
        let company = try anyCompany ? 0 : reader.integer("manufacturer_id", in: 0...0xFFFF)
        let service = try reader.uuid("service_data", kind: .service)
        if layout != nil {
            if name != nil { throw reader.error("layout", .conflict, "give either decoder or layout, not both") }
            switch (company, service) {
            case (_?, nil) where anyCompany: layoutSource = .anyManufacturerData
            case (let company?, nil): layoutSource = .manufacturerData(UInt16(company))
            case (nil, let service?): layoutSource = .serviceData(service)
            case (nil, nil):
                throw reader.error(
                    "layout", .missingKey,
                    "a layout needs the entry it reads: \"manufacturer_id\" (company id, e.g. 1177 for 0x0499) or \"service_data\" (a service UUID)"
                )
            case (_?, _?):
                throw reader.error("service_data", .conflict, "give either manufacturer_id or service_data, not both")
            }
        } else {
            if company != nil || service != nil {
                throw reader.error(
                    company != nil ? "manufacturer_id" : "service_data", .conflict,
                    "applies to a \"layout\"; built-in decoders find their own data")
            }
            layoutSource = nil
        }
        if layout == nil {
            self.decoder = try reader.required(
                name, "decoder", accepted: "a decoder name such as \"bthome\", or a \"layout\"")
        } else {
            self.decoder = nil
        }
        let keyAccepted = "32 hex digits (the 16-byte key)"
        if let text = try reader.string("bind_key", expected: keyAccepted) {
            guard text.count == 32, let bytes = Hex.bytes(text) else {
                throw reader.error("bind_key", .invalidValue, "not a key; expected \(keyAccepted)")
            }
            bindKey = bytes
        }
    }

    /// `"manufacturer_id": "any"`; another string is an error.
    private static func anyCompany(_ reader: ObjectReader) throws -> Bool {
        guard let text = try? reader.string("manufacturer_id") else { return false }
        guard text == "any" else {
            throw reader.error(
                "manufacturer_id", .invalidValue,
                "\"\(text)\" is not a company id; expected an integer from 0 to 65535 or \"any\"")
        }
        return true
    }
}
