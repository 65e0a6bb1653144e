import Bluetooth
import Testing

@testable import BlueZ

/// BlueZ's and D-Bus's error names (and `Device1.Disconnected` reasons) mapped to `BluetoothError` codes and
/// `DisconnectReason`s: the mapping lives in the BlueZ layer, the pure model only has the codes.
@Suite struct BlueZErrorMappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let message: String
        let operation: BluetoothOperation
        let code: BluetoothError.Code
        var testDescription: String { "\(name) \"\(message)\" during \(operation) → \(code)" }
    }

    static let cases: [Case] = [
        Case(
            name: "org.bluez.Error.NotReady", message: "Resource Not Ready", operation: .discovery, code: .notPoweredOn),
        Case(name: "org.bluez.Error.InProgress", message: "In Progress", operation: .connect, code: .inProgress),
        Case(
            name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local", operation: .connect,
            code: .connectionFailed),
        Case(
            name: "org.bluez.Error.Failed", message: "Software caused connection abort", operation: .connect,
            code: .connectionFailed),
        Case(
            name: "org.bluez.Error.Failed", message: "le-connection-timeout", operation: .connect,
            code: .connectionTimeout),
        Case(
            name: "org.bluez.Error.Failed",
            message: "Connection Rejected due to Limited Resources (0x0d)", operation: .connect,
            code: .connectionLimitReached),
        Case(
            name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e", operation: .read,
            code: .attributeError),
        Case(
            name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0d", operation: .write,
            code: .invalidValueLength),
        Case(
            name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05", operation: .read,
            code: .insufficientAuthentication),
        Case(
            name: "org.bluez.Error.InvalidArguments", message: "Invalid Length", operation: .write,
            code: .invalidValueLength),
        Case(
            name: "org.bluez.Error.InvalidArguments", message: "Invalid offset", operation: .read,
            code: .invalidOffset),
        Case(
            name: "org.bluez.Error.Failed", message: "Not connected", operation: .read,
            code: .notConnected),
        Case(name: "org.bluez.Error.Failed", message: "Something odd", operation: .read, code: .failed),
        Case(name: "org.bluez.Error.Failed", message: "Something odd", operation: .connect, code: .connectionFailed),
        Case(
            name: "org.bluez.Error.NotPermitted", message: "Read not permitted", operation: .read,
            code: .readNotPermitted),
        Case(
            name: "org.bluez.Error.NotPermitted", message: "Write not permitted", operation: .write,
            code: .writeNotPermitted),
        Case(
            name: "org.bluez.Error.NotPermitted", message: "Not paired", operation: .read,
            code: .insufficientAuthentication),
        Case(name: "org.bluez.Error.NotPermitted", message: "", operation: .write, code: .writeNotPermitted),
        Case(
            name: "org.bluez.Error.NotAuthorized", message: "Not Authorized", operation: .read,
            code: .insufficientAuthorization),
        Case(
            name: "org.bluez.Error.InvalidValueLength", message: "Invalid Value Length", operation: .write,
            code: .invalidValueLength),
        Case(name: "org.bluez.Error.InvalidOffset", message: "Invalid offset", operation: .read, code: .invalidOffset),
        Case(
            name: "org.bluez.Error.NotSupported", message: "Operation is not supported", operation: .notify,
            code: .operationNotSupported),
        Case(name: "org.bluez.Error.NotConnected", message: "Not Connected", operation: .read, code: .notConnected),
        Case(
            name: "org.bluez.Error.AlreadyConnected", message: "Already Connected", operation: .connect,
            code: .alreadyExists),
        Case(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist", operation: .other, code: .unknownDevice),
        Case(
            name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments in method call",
            operation: .discovery, code: .invalidParameters),
        Case(
            name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed", operation: .pair,
            code: .authenticationFailed),
        Case(
            name: "org.bluez.Error.AuthenticationCanceled", message: "Authentication Canceled", operation: .pair,
            code: .authenticationCanceled),
        Case(
            name: "org.bluez.Error.AuthenticationTimeout", message: "Authentication Timeout", operation: .pair,
            code: .authenticationTimeout),
        Case(
            name: "org.freedesktop.DBus.Error.NoReply", message: "Did not receive a reply", operation: .connect,
            code: .connectionTimeout),
        Case(
            name: "org.freedesktop.DBus.Error.NoReply", message: "Did not receive a reply", operation: .read,
            code: .timeout),
        Case(
            name: "org.freedesktop.DBus.Error.AccessDenied", message: "Rejected send message", operation: .other,
            code: .unauthorized),
        Case(
            name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "The name org.bluez was not provided",
            operation: .read, code: .resetting),
        Case(name: "org.freedesktop.DBus.Error.UnknownObject", message: "", operation: .connect, code: .unknownDevice),
        Case(
            name: "org.freedesktop.DBus.Error.UnknownObject", message: "", operation: .read,
            code: .attributeNotFound),
        Case(name: "com.example.Weird", message: "?", operation: .other, code: .failed),
    ]

    @Test(arguments: cases)
    func mapsBlueZErrors(_ testCase: Case) {
        let error = BluetoothError(bluezName: testCase.name, message: testCase.message, during: testCase.operation)
        #expect(error.code == testCase.code)
        #expect(error.bluezError == BluetoothError.BlueZError(name: testCase.name, message: testCase.message))
        #expect(error.description.contains(testCase.name))
    }

    @Test func disconnectReasonsFromBlueZ() {
        #expect(DisconnectReason(bluezReason: "org.bluez.Reason.Timeout") == .timeout)
        #expect(DisconnectReason(bluezReason: "org.bluez.Reason.Remote") == .remote)
        #expect(DisconnectReason(bluezReason: "org.bluez.Reason.Local") == .local)
        #expect(DisconnectReason(bluezReason: "nonsense") == .unknown)
    }
}
