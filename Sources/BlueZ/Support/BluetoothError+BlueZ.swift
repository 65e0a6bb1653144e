import Bluetooth

extension BluetoothError {
    /// Maps a BlueZ (`org.bluez.Error.*`) or D-Bus (`org.freedesktop.DBus.Error.*`) error to a code, keeping the
    /// original name and message in `bluezError`.
    ///
    /// The mapping follows bluetoothd 5.66 (`src/error.c`, `src/gatt-client.c`, `src/device.c`): GATT errors come
    /// as `NotPermitted` with "Read not permitted" / "Write not permitted" / "Not paired", `InvalidValueLength`,
    /// `InvalidOffset`, `NotAuthorized`, `NotSupported`, or `Failed` with "Operation failed with ATT error: 0x..";
    /// connection failures come as `Failed` with a reason string such as `le-connection-abort-by-local`.
    package init(bluezName name: String, message: String, during operation: BluetoothOperation = .other) {
        let code = Self.code(bluezName: name, message: message, during: operation)
        self.init(code, code.defaultMessage, bluezError: BlueZError(name: name, message: message))
    }

    static let bluezPrefix = "org.bluez.Error."
    static let dbusPrefix = "org.freedesktop.DBus.Error."

    static func code(bluezName name: String, message: String, during operation: BluetoothOperation) -> Code {
        if name.hasPrefix(bluezPrefix) {
            return bluezCode(String(name.dropFirst(bluezPrefix.count)), message: message, during: operation)
        }
        if name.hasPrefix(dbusPrefix) {
            return dbusCode(String(name.dropFirst(dbusPrefix.count)), during: operation)
        }
        return .failed
    }

    private static func bluezCode(_ suffix: String, message: String, during operation: BluetoothOperation) -> Code {
        let lowered = message.lowercased()
        switch suffix {
        case "NotReady": return .notPoweredOn
        case "InProgress": return .inProgress
        case "NotPermitted":
            if lowered.contains("paired") || lowered.contains("authenticat") || lowered.contains("encrypt") {
                return .insufficientAuthentication
            }
            if lowered.contains("read") { return .readNotPermitted }
            if lowered.contains("write") { return .writeNotPermitted }
            return operation == .write ? .writeNotPermitted : .readNotPermitted
        case "NotAuthorized": return .insufficientAuthorization
        case "InvalidValueLength": return .invalidValueLength
        case "InvalidOffset": return .invalidOffset
        case "NotSupported": return .operationNotSupported
        case "NotConnected": return .notConnected
        case "AlreadyConnected", "AlreadyExists": return .alreadyExists
        case "DoesNotExist": return .unknownDevice
        case "NotFound": return .attributeNotFound
        case "InvalidArguments":
            // bluetoothd 5.66 answers an over-long write with "Invalid Length" and a read past the end with
            // "Invalid offset", both under InvalidArguments.
            if lowered.contains("length") { return .invalidValueLength }
            if lowered.contains("offset") { return .invalidOffset }
            return .invalidParameters
        case "AuthenticationFailed", "AuthenticationRejected", "ConnectionAttemptFailed", "Rejected":
            return .authenticationFailed
        case "AuthenticationCanceled", "Canceled": return .authenticationCanceled
        case "AuthenticationTimeout": return .authenticationTimeout
        case "Failed", "NotAvailable": return failedCode(lowered, during: operation)
        default: return operation == .connect ? .connectionFailed : .failed
        }
    }

    /// `org.bluez.Error.Failed` carries its meaning in the message.
    private static func failedCode(_ message: String, during operation: BluetoothOperation) -> Code {
        if message.contains("att error") { return attCode(message) }
        if message.contains("limited resources") { return .connectionLimitReached }
        if message.contains("timeout") || message.contains("timed out") {
            return operation == .connect ? .connectionTimeout : .timeout
        }
        if message.contains("not paired") { return .insufficientAuthentication }
        if message == "not connected" { return operation == .connect ? .connectionFailed : .notConnected }
        if message.contains("disconnected") {
            return operation == .connect ? .connectionFailed : .peripheralDisconnected
        }
        if message.contains("not powered") || message.contains("adapter-not-powered") { return .notPoweredOn }
        if message.hasPrefix("le-connection-") || message.hasPrefix("br-connection-")
            || message.contains("connection abort") || message.contains("connection refused")
            || message.contains("host is down")
        {
            return .connectionFailed
        }
        switch operation {
        case .connect: return .connectionFailed
        case .pair: return .authenticationFailed
        default: return .failed
        }
    }

    /// "Operation failed with ATT error: 0x0d": the ATT error code (Core spec Vol 3 Part F 3.4.1.1) decides.
    private static func attCode(_ message: String) -> Code {
        guard let marker = message.split(separator: "0x", omittingEmptySubsequences: false).last,
            let value = UInt8(marker.prefix(2), radix: 16)
        else { return .attributeError }
        switch value {
        case 0x01: return .attributeNotFound  // invalid handle
        case 0x02: return .readNotPermitted
        case 0x03: return .writeNotPermitted
        case 0x05, 0x0C, 0x0F: return .insufficientAuthentication  // authentication, key size, encryption
        case 0x06: return .operationNotSupported
        case 0x07: return .invalidOffset
        case 0x08: return .insufficientAuthorization
        case 0x0A: return .attributeNotFound
        case 0x0D: return .invalidValueLength
        default: return .attributeError
        }
    }

    private static func dbusCode(_ suffix: String, during operation: BluetoothOperation) -> Code {
        switch suffix {
        case "NoReply", "Timeout", "TimedOut":
            switch operation {
            case .connect: return .connectionTimeout
            case .pair: return .authenticationTimeout
            default: return .timeout
            }
        case "AccessDenied", "AuthFailed": return .unauthorized
        case "ServiceUnknown", "NameHasNoOwner", "Disconnected", "NoServer": return .resetting
        case "UnknownObject", "UnknownInterface":
            switch operation {
            case .connect, .disconnect, .pair: return .unknownDevice
            default: return .attributeNotFound
            }
        case "InvalidArgs": return .invalidParameters
        case "NotSupported", "UnknownMethod": return .operationNotSupported
        default: return .failed
        }
    }
}
