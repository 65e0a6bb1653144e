/// The state of the central manager (`CBManagerState`), derived from BlueZ: whether `org.bluez` is on the bus,
/// whether the adapter exists, whether it is powered, whether we may talk to it.
public enum ManagerState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not determined yet (the manager is still asking BlueZ).
    case unknown
    /// BlueZ went away or the adapter was removed; expect another state soon.
    case resetting
    /// No BlueZ on the bus, or no such adapter.
    case unsupported
    /// D-Bus denied access to BlueZ (policy: user not in the `bluetooth` group).
    case unauthorized
    /// The adapter exists and is powered off (or blocked by rfkill).
    case poweredOff
    /// Ready: scanning and connecting are possible.
    case poweredOn

    public var description: String { rawValue }

    /// The error an operation fails with in this state (nil in `poweredOn`).
    public var operationError: BluetoothError? {
        switch self {
        case .poweredOn: nil
        case .poweredOff: BluetoothError(.notPoweredOn)
        case .unsupported: BluetoothError(.unsupported)
        case .unauthorized: BluetoothError(.unauthorized)
        case .resetting: BluetoothError(.resetting)
        case .unknown: BluetoothError(.notPoweredOn, "the Bluetooth state is not known yet")
        }
    }
}
