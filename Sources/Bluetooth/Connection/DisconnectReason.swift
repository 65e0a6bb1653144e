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

    /// Maps the reason of BlueZ's `Device1.Disconnected` signal (`org.bluez.Reason.Local`, `.Remote`, `.Timeout`,
    /// `.Authentication`, `.Suspend`, `.Unknown`; BlueZ 5.72 and later).
    public init(bluezReason: String) {
        switch bluezReason.split(separator: ".").last.map(String.init) {
        case "Local": self = .local
        case "Remote": self = .remote
        case "Timeout": self = .timeout
        case "Authentication": self = .authentication
        case "Suspend": self = .suspend
        default: self = .unknown
        }
    }

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
