/// Flags of `RequestName`.
public struct DBusRequestNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let allowReplacement = DBusRequestNameFlags(rawValue: 1)
    public static let replaceExisting = DBusRequestNameFlags(rawValue: 2)
    public static let doNotQueue = DBusRequestNameFlags(rawValue: 4)
}
