import BlueZ
import Bluetooth

extension BluetoothHealth {
    /// The problem the central's state means; `bluezRunning`: whether `org.bluez` has an owner.
    package static func problem(for state: ManagerState, bluezRunning: Bool) -> Problem? {
        switch state {
        case .poweredOn: nil
        case .poweredOff: .adapterPoweredOff
        case .unauthorized: .accessDenied
        case .unknown: .starting
        case .unsupported, .resetting: bluezRunning ? .adapterMissing : .bluezNotRunning
        }
    }

    /// The problem an error opening the bus or the central means.
    package static func problem(for error: any Error) -> Problem {
        switch BlueZBus.failure(of: error) {
        case .accessDenied: .accessDenied
        case .bluezNotRunning: .bluezNotRunning
        case .unreachable: .busUnavailable
        }
    }
}
