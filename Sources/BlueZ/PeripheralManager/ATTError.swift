import DBus

/// An ATT error a local characteristic's handler answers with. BlueZ turns each D-Bus error
/// name below into the ATT error code that reaches the remote central.
package struct ATTError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        case failed = "org.bluez.Error.Failed"
        case inProgress = "org.bluez.Error.InProgress"
        case notPermitted = "org.bluez.Error.NotPermitted"
        case invalidValueLength = "org.bluez.Error.InvalidValueLength"
        case invalidOffset = "org.bluez.Error.InvalidOffset"
        case notAuthorized = "org.bluez.Error.NotAuthorized"
        case notSupported = "org.bluez.Error.NotSupported"
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.rawValue): \(message)" }

    var dbusError: DBusError { DBusError(name: DBusErrorName(code.rawValue), message: message) }
}
