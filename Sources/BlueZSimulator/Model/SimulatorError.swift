/// Errors of the simulator's own API and control channel (not BlueZ's).
public struct SimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        case unknownDevice = "UnknownDevice"
        case unknownCharacteristic = "UnknownCharacteristic"
        case invalidArguments = "InvalidArguments"
        case notRunning = "NotRunning"
        case busUnavailable = "BusUnavailable"
        case nameTaken = "NameTaken"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The D-Bus error name on the control channel: `io.blebridge.Simulator.Error.UnknownDevice`.
    public var dbusName: String { "io.blebridge.Simulator.Error." + code.rawValue }

    public var description: String { "\(code.rawValue): \(message)" }
}
