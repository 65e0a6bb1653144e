/// Why a peripheral disconnected.
public enum DisconnectReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// This process asked for it (`cancelConnection`, or a connect that timed out or was cancelled).
    case local
    /// The peripheral or the link went away (BlueZ cannot always tell the two apart).
    case remote
    /// The link supervision timed out (out of range).
    case timeout
    /// Pairing or encryption failed.
    case authentication
    /// The adapter was powered off.
    case adapterPoweredOff
    /// BlueZ (bluetoothd) went away or the adapter was removed.
    case bluezRestarted
    /// The system is suspending.
    case suspend
    /// No reason known.
    case unknown

    public var description: String { rawValue }

    /// The error pending operations fail with when the link goes down for this reason.
    public var pendingOperationError: BluetoothError {
        switch self {
        case .local: BluetoothError(.operationCancelled, "the connection was cancelled")
        case .adapterPoweredOff: BluetoothError(.notPoweredOn, "the adapter was powered off")
        case .bluezRestarted: BluetoothError(.resetting)
        default: BluetoothError(.peripheralDisconnected, "the peripheral disconnected (\(rawValue))")
        }
    }
}
