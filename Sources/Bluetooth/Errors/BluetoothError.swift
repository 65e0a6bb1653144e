/// The one error type of the Bluetooth library: a code you can `catch` and switch over, in the spirit of
/// Core Bluetooth's `CBError` / `CBATTError`, a human-readable message, and the original BlueZ error (name and
/// message) when one caused it, for logs.
///
/// ```swift
/// do { try await peripheral.readValue(for: characteristic) }
/// catch let error as BluetoothError where error.code == .insufficientAuthentication { … pair … }
/// ```
public struct BluetoothError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as a value callers can compare and switch over.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // Manager / adapter state (CBManagerState-related).
        /// The adapter is not powered on (BlueZ `NotReady`, or `Powered` false).
        case notPoweredOn
        /// No BlueZ on the bus, or no such adapter.
        case unsupported
        /// The process may not talk to BlueZ (D-Bus `AccessDenied`).
        case unauthorized
        /// BlueZ went away or is restarting; the operation was abandoned.
        case resetting

        // Connection (CBError).
        /// `connect(_:timeout:)` did not complete in time (`CBError.connectionTimeout`).
        case connectionTimeout
        /// The controller or BlueZ failed the connection; `bluezError` holds the reason,
        /// e.g. `le-connection-abort-by-local` (`CBError.connectionFailed`).
        case connectionFailed
        /// The peripheral disconnected while the operation was pending (`CBError.peripheralDisconnected`).
        case peripheralDisconnected
        /// The operation needs a connection and the peripheral is not connected (`CBError.notConnected`).
        case notConnected
        /// The caller cancelled the operation, e.g. `cancelConnection` during `connect` (`CBError.operationCancelled`).
        case operationCancelled
        /// The connection limit of the controller was reached (`CBError.connectionLimitReached`).
        case connectionLimitReached
        /// BlueZ does not know the device (`DoesNotExist`, removed from its cache) (`CBError.unknownDevice`).
        case unknownDevice
        /// BlueZ is already doing this (`InProgress`).
        case inProgress
        /// The device is already connected or the object exists (`AlreadyConnected`, `AlreadyExists`).
        case alreadyExists

        // GATT (CBATTError).
        /// The attribute or peripheral does not support the operation (`NotSupported`, `CBATTError.requestNotSupported`).
        case operationNotSupported
        /// Reading is not permitted (`CBATTError.readNotPermitted`).
        case readNotPermitted
        /// Writing is not permitted (`CBATTError.writeNotPermitted`).
        case writeNotPermitted
        /// The link must be paired/encrypted first (BlueZ `NotPermitted: Not paired`,
        /// `CBATTError.insufficientAuthentication` / `insufficientEncryption`).
        case insufficientAuthentication
        /// The peripheral refused authorisation (`NotAuthorized`, `CBATTError.insufficientAuthorization`).
        case insufficientAuthorization
        /// The value is too long or too short for the attribute (`InvalidValueLength`,
        /// `CBATTError.invalidAttributeValueLength`).
        case invalidValueLength
        /// The offset is past the end of the value (`InvalidOffset`, `CBATTError.invalidOffset`).
        case invalidOffset
        /// The service, characteristic or descriptor does not exist on the peripheral (`CBATTError.attributeNotFound`).
        case attributeNotFound
        /// The peripheral answered with another ATT error; the BlueZ message has its code.
        case attributeError

        // Pairing.
        /// Pairing failed (`AuthenticationFailed`, `AuthenticationRejected`, `ConnectionAttemptFailed`).
        case authenticationFailed
        /// Pairing was cancelled (`AuthenticationCanceled`, agent cancelled).
        case authenticationCanceled
        /// Pairing timed out (`AuthenticationTimeout`).
        case authenticationTimeout

        // General.
        /// An argument was invalid: an unknown UUID string, a bad filter (`InvalidArguments`, `CBError.invalidParameters`).
        case invalidParameters
        /// The operation timed out (D-Bus `NoReply` / `Timeout` for a non-connect call).
        case timeout
        /// Anything else (`Failed` with an unknown message, an unexpected D-Bus error).
        case failed
    }

    /// The original BlueZ or D-Bus error, kept for logs: name (`org.bluez.Error.Failed`) and message
    /// (`le-connection-abort-by-local`).
    public struct BlueZError: Sendable, Hashable, CustomStringConvertible {
        public var name: String
        public var message: String

        public init(name: String, message: String) {
            self.name = name
            self.message = message
        }

        public var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }

    public var code: Code
    public var message: String
    /// The BlueZ / D-Bus error this was mapped from, if any.
    public var bluezError: BlueZError?

    public init(_ code: Code, _ message: String = "", bluezError: BlueZError? = nil) {
        self.code = code
        self.message = message.isEmpty ? code.defaultMessage : message
        self.bluezError = bluezError
    }

    public var description: String {
        if let bluezError { return "\(code.rawValue): \(message) (\(bluezError))" }
        return "\(code.rawValue): \(message)"
    }
}

extension BluetoothError.Code {
    /// A short English sentence for the code.
    public var defaultMessage: String {
        switch self {
        case .notPoweredOn: "the Bluetooth adapter is not powered on"
        case .unsupported: "Bluetooth is not available (no BlueZ on the bus, or no such adapter)"
        case .unauthorized: "access to BlueZ was denied"
        case .resetting: "BlueZ is restarting"
        case .connectionTimeout: "the connection timed out"
        case .connectionFailed: "the connection failed"
        case .peripheralDisconnected: "the peripheral disconnected"
        case .notConnected: "the peripheral is not connected"
        case .operationCancelled: "the operation was cancelled"
        case .connectionLimitReached: "the controller cannot take more connections"
        case .unknownDevice: "unknown device"
        case .inProgress: "the operation is already in progress"
        case .alreadyExists: "already connected or already exists"
        case .operationNotSupported: "the operation is not supported"
        case .readNotPermitted: "reading is not permitted"
        case .writeNotPermitted: "writing is not permitted"
        case .insufficientAuthentication: "the peripheral requires pairing (insufficient authentication)"
        case .insufficientAuthorization: "insufficient authorization"
        case .invalidValueLength: "invalid value length"
        case .invalidOffset: "invalid offset"
        case .attributeNotFound: "no such service, characteristic or descriptor"
        case .attributeError: "the peripheral answered with an ATT error"
        case .authenticationFailed: "pairing failed"
        case .authenticationCanceled: "pairing was cancelled"
        case .authenticationTimeout: "pairing timed out"
        case .invalidParameters: "invalid parameters"
        case .timeout: "the operation timed out"
        case .failed: "the operation failed"
        }
    }

    /// True for the errors after which trying again later may succeed: timeouts, disconnects, aborted
    /// connections, `InProgress`, BlueZ restarting. False for errors that will repeat (not supported,
    /// not permitted, invalid parameters, …).
    public var isTransient: Bool {
        switch self {
        case .connectionTimeout, .connectionFailed, .peripheralDisconnected, .notConnected, .inProgress,
            .resetting, .timeout, .failed, .connectionLimitReached, .notPoweredOn, .unknownDevice, .alreadyExists:
            true
        case .unsupported, .unauthorized, .operationCancelled, .operationNotSupported, .readNotPermitted,
            .writeNotPermitted, .insufficientAuthentication, .insufficientAuthorization, .invalidValueLength,
            .invalidOffset, .attributeNotFound, .attributeError, .authenticationFailed, .authenticationCanceled,
            .authenticationTimeout, .invalidParameters:
            false
        }
    }
}
