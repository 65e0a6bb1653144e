/// A validated D-Bus object path (`/org/bluez/hci0`).
public struct DBusObjectPath: Hashable, Sendable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String

    /// Validates `rawValue`; throws `org.freedesktop.DBus.Error.InvalidArgs` when it is not a path.
    public init(_ rawValue: String) throws(DBusError) {
        guard Self.isValid(rawValue) else {
            throw DBusError(.invalidArgs, "invalid object path '\(rawValue)'")
        }
        self.rawValue = rawValue
    }

    /// Returns nil when `rawValue` is not a valid object path.
    public init?(validating rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A literal must be a valid path (a programming error otherwise).
    public init(stringLiteral value: String) {
        precondition(Self.isValid(value), "invalid D-Bus object path literal '\(value)'")
        self.rawValue = value
    }

    /// Skips validation: for paths libdbus already validated.
    init(trusted rawValue: String) { self.rawValue = rawValue }

    public static let root: DBusObjectPath = "/"

    public var description: String { rawValue }

    public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `path` with `element` appended (`/org/bluez` + `hci0`); `element` must be a valid element.
    public func appending(_ element: String) throws(DBusError) -> DBusObjectPath {
        try DBusObjectPath(rawValue == "/" ? "/\(element)" : "\(rawValue)/\(element)")
    }

    /// True when `self` is `ancestor` or lies below it.
    public func isDescendant(of ancestor: DBusObjectPath, orEqual: Bool = true) -> Bool {
        if rawValue == ancestor.rawValue { return orEqual }
        if ancestor.rawValue == "/" { return true }
        return rawValue.hasPrefix(ancestor.rawValue + "/")
    }

    /// The D-Bus rules: `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`, no trailing `/`.
    public static func isValid(_ path: String) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
                continue
            }
            previousWasSlash = false
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                continue
            default: return false
            }
        }
        return !previousWasSlash
    }
}
