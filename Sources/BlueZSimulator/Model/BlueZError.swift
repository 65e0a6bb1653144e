/// An error as bluetoothd 5.66 sends it: the exact name and message (`src/error.c`, `src/gatt-client.c`).
package struct BlueZError: Error, Sendable, Hashable, CustomStringConvertible {
    package var name: String
    package var message: String

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    package var description: String { "\(name): \(message)" }

    static let prefix = "org.bluez.Error."

    /// `btd_error_not_ready`: adapter powered off.
    package static let notReady = BlueZError(name: prefix + "NotReady", message: "Resource Not Ready")
    /// `btd_error_busy`: e.g. a second `StartDiscovery` from the same client.
    package static let busy = BlueZError(name: prefix + "InProgress", message: "Operation already in progress")
    /// `btd_error_in_progress`.
    package static let inProgress = BlueZError(name: prefix + "InProgress", message: "In Progress")
    package static let notSupported = BlueZError(name: prefix + "NotSupported", message: "Operation is not supported")
    package static let notConnected = BlueZError(name: prefix + "NotConnected", message: "Not Connected")
    package static let alreadyConnected = BlueZError(name: prefix + "AlreadyConnected", message: "Already Connected")
    package static let alreadyExists = BlueZError(name: prefix + "AlreadyExists", message: "Already Exists")
    package static let doesNotExist = BlueZError(name: prefix + "DoesNotExist", message: "Does Not Exist")
    package static let notAuthorized = BlueZError(name: prefix + "NotAuthorized", message: "Operation Not Authorized")
    package static let invalidArguments = invalidArguments("Invalid arguments in method call")
    package static let authenticationFailed = BlueZError(
        name: prefix + "AuthenticationFailed", message: "Authentication Failed")
    package static let authenticationRejected = BlueZError(
        name: prefix + "AuthenticationRejected", message: "Authentication Rejected")
    package static let authenticationCanceled = BlueZError(
        name: prefix + "AuthenticationCanceled", message: "Authentication Canceled")

    package static func failed(_ message: String) -> BlueZError {
        BlueZError(name: prefix + "Failed", message: message)
    }
    package static func notPermitted(_ message: String) -> BlueZError {
        BlueZError(name: prefix + "NotPermitted", message: message)
    }
    package static func invalidArguments(_ message: String) -> BlueZError {
        BlueZError(name: prefix + "InvalidArguments", message: message)
    }

    /// `le-connection-abort-by-local`: the failure users meet most (bleak#1255).
    package static let abortByLocal = failed("le-connection-abort-by-local")
    /// `Connect` while an LE connection attempt is pending: `strerror(EALREADY)`.
    package static let connectAlreadyPending = failed("Operation already in progress")
    /// GATT operations on a disconnected device.
    package static let gattNotConnected = failed("Not connected")

    /// The D-Bus error an ATT error response from the peer becomes (`create_gatt_dbus_error`).
    package static func att(_ code: ATTError) -> BlueZError {
        switch code {
        case .readNotPermitted: notPermitted("Read not permitted")
        case .writeNotPermitted: notPermitted("Write not permitted")
        case .insufficientAuthentication, .insufficientEncryption, .insufficientEncryptionKeySize:
            notPermitted("Not paired")
        case .invalidOffset: invalidArguments("Invalid offset")
        case .invalidAttributeValueLength: invalidArguments("Invalid Length")
        case .insufficientAuthorization: notAuthorized
        case .requestNotSupported: notSupported
        default: failed("Operation failed with ATT error: 0x" + String(format2: code.rawValue))
        }
    }
}

/// ATT error codes a simulated peer answers with (Core spec Vol 3 Part F 3.4.1.1).
package enum ATTError: UInt8, Sendable, Hashable {
    case invalidHandle = 0x01
    case readNotPermitted = 0x02
    case writeNotPermitted = 0x03
    case insufficientAuthentication = 0x05
    case requestNotSupported = 0x06
    case invalidOffset = 0x07
    case insufficientAuthorization = 0x08
    case insufficientEncryptionKeySize = 0x0c
    case invalidAttributeValueLength = 0x0d
    /// "Unlikely Error": what bluetoothd 5.66 answers a request with when the security raise it caused
    /// failed because the peer refused pairing (measured in the VM tier).
    case unlikelyError = 0x0e
    case insufficientEncryption = 0x0f
    case valueNotAllowed = 0x13
}

extension String {
    /// Two lowercase hex digits.
    init(format2 byte: UInt8) {
        let digits = String(byte, radix: 16)
        self = digits.count == 1 ? "0" + digits : digits
    }
}
