/// Identifies one service, characteristic or descriptor of one peripheral, stable while the peripheral's GATT
/// database is (a BlueZ backend uses the object path, e.g. `/org/bluez/hci0/dev_…/service000c/char000d`).
/// Two attributes with the same UUID (two Battery services) have different identifiers.
public struct GATTAttributeID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public static func < (lhs: GATTAttributeID, rhs: GATTAttributeID) -> Bool { lhs.rawValue < rhs.rawValue }
}
