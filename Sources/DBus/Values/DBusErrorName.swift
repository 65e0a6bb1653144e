/// The name of a D-Bus error (`org.freedesktop.DBus.Error.ServiceUnknown`, `org.bluez.Error.InProgress`, …),
/// a value callers can `catch` and compare.
public struct DBusErrorName: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static let failed = DBusErrorName("org.freedesktop.DBus.Error.Failed")
    public static let noMemory = DBusErrorName("org.freedesktop.DBus.Error.NoMemory")
    public static let serviceUnknown = DBusErrorName("org.freedesktop.DBus.Error.ServiceUnknown")
    public static let nameHasNoOwner = DBusErrorName("org.freedesktop.DBus.Error.NameHasNoOwner")
    public static let noReply = DBusErrorName("org.freedesktop.DBus.Error.NoReply")
    public static let ioError = DBusErrorName("org.freedesktop.DBus.Error.IOError")
    public static let badAddress = DBusErrorName("org.freedesktop.DBus.Error.BadAddress")
    public static let notSupported = DBusErrorName("org.freedesktop.DBus.Error.NotSupported")
    public static let limitsExceeded = DBusErrorName("org.freedesktop.DBus.Error.LimitsExceeded")
    public static let accessDenied = DBusErrorName("org.freedesktop.DBus.Error.AccessDenied")
    public static let authFailed = DBusErrorName("org.freedesktop.DBus.Error.AuthFailed")
    public static let noServer = DBusErrorName("org.freedesktop.DBus.Error.NoServer")
    public static let timeout = DBusErrorName("org.freedesktop.DBus.Error.Timeout")
    public static let noNetwork = DBusErrorName("org.freedesktop.DBus.Error.NoNetwork")
    public static let disconnected = DBusErrorName("org.freedesktop.DBus.Error.Disconnected")
    public static let invalidArgs = DBusErrorName("org.freedesktop.DBus.Error.InvalidArgs")
    public static let fileNotFound = DBusErrorName("org.freedesktop.DBus.Error.FileNotFound")
    public static let unknownMethod = DBusErrorName("org.freedesktop.DBus.Error.UnknownMethod")
    public static let unknownObject = DBusErrorName("org.freedesktop.DBus.Error.UnknownObject")
    public static let unknownInterface = DBusErrorName("org.freedesktop.DBus.Error.UnknownInterface")
    public static let unknownProperty = DBusErrorName("org.freedesktop.DBus.Error.UnknownProperty")
    public static let propertyReadOnly = DBusErrorName("org.freedesktop.DBus.Error.PropertyReadOnly")
    public static let timedOut = DBusErrorName("org.freedesktop.DBus.Error.TimedOut")
    public static let matchRuleInvalid = DBusErrorName("org.freedesktop.DBus.Error.MatchRuleInvalid")
    public static let invalidSignature = DBusErrorName("org.freedesktop.DBus.Error.InvalidSignature")
    public static let inconsistentMessage = DBusErrorName("org.freedesktop.DBus.Error.InconsistentMessage")
}
