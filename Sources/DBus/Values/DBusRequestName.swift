/// Flags of `RequestName`.
public struct DBusRequestNameFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let allowReplacement = DBusRequestNameFlags(rawValue: 1)
    public static let replaceExisting = DBusRequestNameFlags(rawValue: 2)
    public static let doNotQueue = DBusRequestNameFlags(rawValue: 4)
}

/// The bus daemon's answer to `RequestName`.
public enum DBusRequestNameReply: UInt32, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}

/// The bus daemon's answer to `ReleaseName`.
public enum DBusReleaseNameReply: UInt32, Sendable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}
