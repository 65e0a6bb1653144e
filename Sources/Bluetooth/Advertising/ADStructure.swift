/// One AD structure of an advertisement (Core Specification Vol 3 Part C §11): a type and its
/// data, without the length byte.
package struct ADStructure: Sendable, Hashable {
    package static let flags: UInt8 = 0x01
    package static let incomplete16BitServices: UInt8 = 0x02
    package static let complete16BitServices: UInt8 = 0x03
    package static let incomplete32BitServices: UInt8 = 0x04
    package static let complete32BitServices: UInt8 = 0x05
    package static let incomplete128BitServices: UInt8 = 0x06
    package static let complete128BitServices: UInt8 = 0x07
    package static let shortenedLocalName: UInt8 = 0x08
    package static let completeLocalName: UInt8 = 0x09
    package static let serviceData16: UInt8 = 0x16
    package static let serviceData32: UInt8 = 0x20
    package static let serviceData128: UInt8 = 0x21
    package static let manufacturerSpecificData: UInt8 = 0xFF

    package var type: UInt8
    package var data: [UInt8]

    package init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// The AD type of service data under `uuid` (16-, 32- or 128-bit form).
    package static func serviceDataType(for uuid: BluetoothUUID) -> UInt8 {
        switch airBytes(uuid).count {
        case 2: serviceData16
        case 4: serviceData32
        default: serviceData128
        }
    }

    /// A UUID as sent in advertising data: its shortest form (2, 4 or 16 bytes), little-endian.
    package static func airBytes(_ uuid: BluetoothUUID) -> [UInt8] {
        if let short = uuid.shortValue { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        if let value = uuid.value32 { return (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        return uuid.littleEndianBytes
    }

    /// The structures an advertiser sends for this data, as a controller would put them on air:
    /// the complete local name, the service UUID lists by size, service data (UUID little-endian,
    /// then the value) and manufacturer data (company id little-endian, then the value).
    package static func structures(of advertisement: AdvertisementData) -> [ADStructure] {
        var structures: [ADStructure] = []
        if let name = advertisement.localName {
            structures.append(ADStructure(type: completeLocalName, data: Array(name.utf8)))
        }
        var lists: [UInt8: [UInt8]] = [:]
        for uuid in advertisement.serviceUUIDs {
            let bytes = airBytes(uuid)
            let type: UInt8 =
                switch bytes.count {
                case 2: complete16BitServices
                case 4: complete32BitServices
                default: complete128BitServices
                }
            lists[type, default: []] += bytes
        }
        for type in lists.keys.sorted() { structures.append(ADStructure(type: type, data: lists[type]!)) }
        for (uuid, value) in advertisement.serviceData.sorted(by: { $0.key < $1.key }) {
            structures.append(
                ADStructure(type: serviceDataType(for: uuid), data: airBytes(uuid) + value))
        }
        for (company, value) in advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) {
            structures.append(
                ADStructure(
                    type: manufacturerSpecificData, data: [UInt8(company & 0xFF), UInt8(company >> 8)] + value))
        }
        return structures
    }
}
