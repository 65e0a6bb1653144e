/// An error from D-Bus: a name callers can `catch` and compare, and a human-readable message.
///
/// The same type is used for errors received from peers (`org.bluez.Error.InProgress`), errors
/// raised by libdbus or the bus daemon (`org.freedesktop.DBus.Error.NoReply`) and errors raised by
/// this module (type mismatches, invalid paths). A method handler throws it to reply with that
/// error name.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: DBusErrorName
    public var message: String

    public init(name: DBusErrorName, message: String) {
        self.name = name
        self.message = message
    }

    public init(_ name: DBusErrorName, _ message: String) {
        self.init(name: name, message: message)
    }

    public var description: String { message.isEmpty ? name.rawValue : "\(name.rawValue): \(message)" }

    /// A value or argument list did not have the expected signature.
    static func typeMismatch(expected: String, actual: String, context: String = "") -> DBusError {
        let prefix = context.isEmpty ? "" : "\(context): "
        return DBusError(.invalidArgs, "\(prefix)expected signature '\(expected)', got '\(actual)'")
    }
}

extension DBusError {
    static let connectionClosed = DBusError(.disconnected, "the D-Bus connection is closed")
}
