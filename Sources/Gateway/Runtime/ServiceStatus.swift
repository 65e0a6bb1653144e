/// What the gateway is doing, in the one line systemd shows as `Status:` in `systemctl status`
/// (`STATUS=` of sd_notify). Pure: the gateway fills the fields as events arrive, ``text`` words them.
///
/// ```
/// Bluetooth ready (hci0); devices 2/3 online (1 connected); broker connected; outbox empty
/// Bluetooth unavailable (adapter_powered_off): hci0 powered off or rfkill-blocked; devices 0/3 online; broker unreachable, retrying; outbox 41 queued
/// ```
///
/// To add a field (e.g. more about the adapter), add a stored property here, one clause in
/// ``clauses``, and set it where the gateway learns it (`Gateway.updateStatus`).
package struct ServiceStatus: Sendable, Hashable {
    /// The broker connection.
    package enum BrokerState: Sendable, Hashable {
        case connecting
        case connected
        /// Lost or refused; the client retries with back-off.
        case disconnected
    }

    /// What the gateway knows about Bluetooth (``BLELink`` reports it); nil until it first reports.
    package var bluetooth: BluetoothHealth?
    /// Configured devices that are online (connected, or seen advertising within the scan TTL).
    package var onlineDevices: Int
    /// Configured devices with a live connection.
    package var connectedDevices: Int
    package var configuredDevices: Int
    package var broker: BrokerState
    /// Readings waiting in the outbox; nil until first read.
    package var outboxDepth: Int?
    /// Why the outbox refuses writes (`disk_full`, `locked`, …), nil while it accepts them.
    package var outboxError: String?

    package init(
        bluetooth: BluetoothHealth? = nil, onlineDevices: Int = 0, connectedDevices: Int = 0,
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
    package var text: String { clauses.joined(separator: "; ") }

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
        return [bluetooth?.statusText ?? "Bluetooth starting", devices, "broker \(Self.words(broker))", outbox]
    }

    static func words(_ state: BrokerState) -> String {
        switch state {
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected: "unreachable, retrying"
        }
    }
}
