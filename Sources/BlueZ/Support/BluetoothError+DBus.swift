import Bluetooth
import DBus

extension BluetoothError {
    /// Any error from a BlueZ call, as a `BluetoothError`: D-Bus errors mapped by name and message, task
    /// cancellation as `operationCancelled`, anything else as `failed`.
    static func from(_ error: any Error, during operation: BluetoothOperation) -> BluetoothError {
        switch error {
        case let error as BluetoothError: return error
        case let error as DBusError:
            return BluetoothError(bluezName: error.name.rawValue, message: error.message, during: operation)
        case is CancellationError: return BluetoothError(.operationCancelled)
        default: return BluetoothError(.failed, String(describing: error))
        }
    }
}
