import Bluetooth
import JSON

/// One validated step to execute against BlueZ.
package enum GatewayCommand: Sendable, Hashable {
    /// `name` is the configured command name (nil for raw GATT writes); `service` picks the
    /// characteristic within that service when the configuration names one.
    case write(
        device: String, characteristic: BluetoothUUID, value: [UInt8], type: WriteType, name: String?,
        service: BluetoothUUID? = nil)
    case read(device: String, characteristic: BluetoothUUID, name: String?, service: BluetoothUUID? = nil)
    case notify(device: String, characteristic: BluetoothUUID, enable: Bool, service: BluetoothUUID? = nil)
    case scan(duration: Duration)
    case connect(device: String)
    case disconnect(device: String)
    case listDevices
    /// `bridge/request/config/reload` and `bridge/request/restart` (``GatewayControlRequest``).
    case reloadConfiguration
    case restart
    /// `bridge/request/device/adopt` (``AdoptedDevices``): `device` is the automatic device's id now.
    case adopt(device: String, id: String, name: String?, bindKey: [UInt8]?)
    /// `bridge/request/device/remove`: an adopted or automatic device.
    case removeDevice(device: String)

    package var device: String? {
        switch self {
        case .write(let device, _, _, _, _, _), .read(let device, _, _, _), .notify(let device, _, _, _),
            .connect(let device), .disconnect(let device):
            device
        // An adoption is a bridge request: the bridge's rate limit, not the device's.
        case .scan, .listDevices, .reloadConfiguration, .restart, .adopt, .removeDevice: nil
        }
    }
}

/// A command that passed every check: what to do, for whom, and how to answer.
public struct ValidatedCommand: Sendable, Hashable {
    package var transaction: JSONValue?
    /// The topic it arrived on (logged with every accepted or refused command).
    package var source: String
    package var device: String?
    package var steps: [GatewayCommand]

    package init(transaction: JSONValue?, source: String, device: String?, steps: [GatewayCommand]) {
        self.transaction = transaction
        self.source = source
        self.device = device
        self.steps = steps
    }
}
