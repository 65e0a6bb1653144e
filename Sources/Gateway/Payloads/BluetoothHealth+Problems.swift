import Bluetooth
import DBus

extension BluetoothHealth {
    /// The problem the central's state means; `bluezRunning`: whether `org.bluez` has an owner.
    public static func problem(for state: ManagerState, bluezRunning: Bool) -> Problem? {
        switch state {
        case .poweredOn: nil
        case .poweredOff: .adapterPoweredOff
        case .unauthorized: .accessDenied
        case .unknown: .starting
        case .unsupported, .resetting: bluezRunning ? .adapterMissing : .bluezNotRunning
        }
    }

    /// The problem an error opening the bus or the central means.
    public static func problem(for error: any Error) -> Problem {
        if let error = error as? DBusError {
            switch error.name {
            case .accessDenied, .authFailed, .noReply, .timeout, .timedOut: return .accessDenied
            case .serviceUnknown, .nameHasNoOwner: return .bluezNotRunning
            default: return .busUnavailable
            }
        }
        if let error = error as? BluetoothError, error.code == .unauthorized { return .accessDenied }
        return .busUnavailable
    }
}
