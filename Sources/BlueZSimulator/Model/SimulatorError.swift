/// Errors of the simulator's own API and control channel (not BlueZ's).
package struct SimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable, Equatable {
        case unknownDevice = "UnknownDevice"
        case unknownCharacteristic = "UnknownCharacteristic"
        case invalidArguments = "InvalidArguments"
        case notRunning = "NotRunning"
        case busUnavailable = "BusUnavailable"
        case nameTaken = "NameTaken"
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The D-Bus error name on the control channel: `io.blebridge.Simulator.Error.UnknownDevice`.
    package var dbusName: String { "io.blebridge.Simulator.Error." + code.rawValue }

    package var description: String { "\(code.rawValue): \(message)" }
}
