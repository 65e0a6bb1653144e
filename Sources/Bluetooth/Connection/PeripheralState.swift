/// The connection state of a peripheral (`CBPeripheralState`). `connected` means usable: connected and its
/// services resolved.
public enum PeripheralState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case disconnected
    case connecting
    case connected
    case disconnecting

    public var description: String { rawValue }
}
