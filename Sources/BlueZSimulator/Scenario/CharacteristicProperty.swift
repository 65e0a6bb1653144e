/// A characteristic property bit, named as BlueZ prints it in `GattCharacteristic1.Flags`.
///
/// The order of the cases is the order BlueZ lists them (properties, then extended properties).
package enum CharacteristicProperty: String, Sendable, Hashable, CaseIterable, Comparable {
    case broadcast
    case read
    case writeWithoutResponse = "write-without-response"
    case write
    case notify
    case indicate
    case authenticatedSignedWrites = "authenticated-signed-writes"
    case extendedProperties = "extended-properties"
    case reliableWrite = "reliable-write"
    case writableAuxiliaries = "writable-auxiliaries"

    /// The ATT characteristic-declaration property bit (extended properties have none).
    package var declarationBit: UInt8? {
        switch self {
        case .broadcast: 0x01
        case .read: 0x02
        case .writeWithoutResponse: 0x04
        case .write: 0x08
        case .notify: 0x10
        case .indicate: 0x20
        case .authenticatedSignedWrites: 0x40
        case .extendedProperties: 0x80
        case .reliableWrite, .writableAuxiliaries: nil
        }
    }

    private var order: Int { Self.allCases.firstIndex(of: self)! }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.order < rhs.order }

    /// BlueZ's `Flags` value: the names in BlueZ's order.
    package static func flags(_ properties: Set<Self>) -> [String] {
        properties.sorted().map(\.rawValue)
    }
}
