import Bluetooth

/// What the gateway is doing, in the one line systemd shows as `Status:` in `systemctl status`
/// (`STATUS=` of sd_notify). Pure: the gateway fills the fields as events arrive, ``text`` words them.
///
/// ```
/// Bluetooth on; devices 2/3 online (1 connected); broker connected; outbox empty
/// Bluetooth off (powered off or rfkill-blocked); devices 0/3 online; broker unreachable, retrying; outbox 41 queued
/// ```
///
/// To add a field (e.g. more about the adapter), add a stored property here, one clause in
/// ``clauses``, and set it where the gateway learns it (`Gateway.updateStatus`).
public struct ServiceStatus: Sendable, Hashable {
    /// What the gateway knows about Bluetooth.
    public enum BluetoothState: Sendable, Hashable {
        /// The central manager has not reported a state yet.
        case starting
        /// The central manager's state (BlueZ's adapter as seen over D-Bus).
        case manager(ManagerState)
        /// The gateway could not reach BlueZ at start (no system bus, no org.bluez).
        case unreachable
    }

    /// The broker connection.
    public enum BrokerState: Sendable, Hashable {
        case connecting
        case connected
        /// Lost or refused; the client retries with back-off.
        case disconnected
    }

    public var bluetooth: BluetoothState
    /// Configured devices that are online (connected, or seen advertising within the scan TTL).
    public var onlineDevices: Int
    /// Configured devices with a live connection.
    public var connectedDevices: Int
    public var configuredDevices: Int
    public var broker: BrokerState
    /// Readings waiting in the outbox; nil until first read.
    public var outboxDepth: Int?
    /// Why the outbox refuses writes (`disk_full`, `locked`, …), nil while it accepts them.
    public var outboxError: String?

    public init(
        bluetooth: BluetoothState = .starting, onlineDevices: Int = 0, connectedDevices: Int = 0,
        configuredDevices: Int = 0, broker: BrokerState = .connecting, outboxDepth: Int? = nil,
        outboxError: String? = nil
    ) {
        self.bluetooth = bluetooth
        self.onlineDevices = onlineDevices
        self.connectedDevices = connectedDevices
        self.configuredDevices = configuredDevices
        self.broker = broker
        self.outboxDepth = outboxDepth
        self.outboxError = outboxError
    }

    /// The status line.
    public var text: String { clauses.joined(separator: "; ") }

    var clauses: [String] {
        var devices = "devices \(onlineDevices)/\(configuredDevices) online"
        if connectedDevices > 0 { devices += " (\(connectedDevices) connected)" }
        var outbox: String
        switch outboxDepth {
        case nil: outbox = "outbox opening"
        case 0?: outbox = "outbox empty"
        case let depth?: outbox = "outbox \(depth) queued"
        }
        if let outboxError { outbox += ", refusing writes (\(outboxError))" }
        return ["Bluetooth \(Self.words(bluetooth))", devices, "broker \(Self.words(broker))", outbox]
    }

    static func words(_ state: BluetoothState) -> String {
        switch state {
        case .starting, .manager(.unknown): "starting"
        case .unreachable: "unreachable (is bluetoothd running?)"
        case .manager(.poweredOn): "on"
        case .manager(.poweredOff): "off (powered off or rfkill-blocked)"
        case .manager(.unauthorized): "access denied (user not in group bluetooth?)"
        case .manager(.unsupported): "no adapter (or bluetoothd not running)"
        case .manager(.resetting): "resetting"
        }
    }

    static func words(_ state: BrokerState) -> String {
        switch state {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected: "unreachable, retrying"
        }
    }
}
