import Bluetooth
import Decoders

/// The seam between the link and the ``Gateway`` that runs it. The link holds no reference to the
/// gateway: it says what happened as ``Event``s, and asks its ``Host`` the answers only the gateway
/// has. The gateway builds the host (``Gateway/linkHost()``) and handles every event in one place
/// (``Gateway/linkEvent(_:number:)``).
extension BLELink {
    /// What the link tells the gateway, handled in the order the link decided it (``report(_:)``).
    enum Event: Sendable, Equatable {
        /// What is known about Bluetooth changed (the bus, bluetoothd, the adapter, the monitors).
        case health(BluetoothHealth)
        /// The adapter is powered on, or went off or away (every link is down then).
        case adapterPowered(Bool)
        /// A device advertised with `rssi`; `readings` are what the advertisement decoded to (room presence).
        case heard(String, rssi: Int?, readings: [DecodedReading])
        /// BlueZ removed the device's object (``CentralManager/deviceRemovals``): it is no longer heard.
        case vanished(String)
        /// Connected, resolved and subscribed (the service UUIDs in short form).
        case connected(String, services: [String])
        case connectFailed(String, error: String)
        /// BlueZ had no object for the device when its connect was due.
        case unseen(String)
        /// The link went down; `expected` when the gateway asked for it.
        case disconnected(String, expected: Bool)
        /// The Device Information service's strings (read once per run).
        case described(String, manufacturer: String?, model: String?, firmware: String?)
        /// The pool's `poll` read every polled characteristic.
        case pollFinished(String)
    }

    /// What the link is given instead of the gateway: one sink for its ``Event``s, and the answers it
    /// must wait for. Each answer is awaited where the link used to call the gateway (a stream read
    /// by one task would queue every question behind a handler waiting for the broker's PUBACK);
    /// the events go through ``BLELink/report(_:)``.
    struct Host: Sendable {
        /// Every event; returns once the gateway has handled it. The link's own events are numbered
        /// 1, 2, 3, … in the order it decided them (``BLELink/report(_:)``); the advertisement
        /// intake's (`heard`, on the pool, each device's in order) have no number.
        let report: @Sendable (Event, _ number: Int?) async -> Void
        /// A configured device advertised (`rssi`), or was restored from the state database (`rssi`
        /// nil); `persistent` when BlueZ keeps its object (paired or trusted). Whether this gateway
        /// publishes its advertisement readings (shared-broker mode: only the passive device's
        /// owner); nil once the gateway is gone. An answer, and the restored devices must be known
        /// before the link's start returns (the gateway reads commands next).
        let seen: @Sendable (_ id: String, _ address: String, _ rssi: Int?, _ persistent: Bool) async -> Bool?
        /// The id an advertiser at a fixed address caught by the match of `template` (a device whose
        /// match has no address) is published under, nil when refused (``MatchInstances``, which the
        /// gateway keeps with the configuration it expands).
        let assignMatch: @Sendable (_ address: BluetoothAddress, _ template: String) async -> String?
        /// `auto_devices`: the id of the automatic device for an unconfigured advertiser a built-in
        /// decoder recognises, nil when none is made (``AutoDevices``, kept by the gateway).
        let addAutoDevice: @Sendable (_ address: BluetoothAddress, _ decoder: String, _ name: String?) async -> String?
        /// The peripherals connected in earlier runs (``GatewayStateStore``), for state restoration
        /// and the stale-GATT-cache recovery.
        let knownPeripherals: @Sendable () async throws -> [KnownPeripheral]
        /// Stores a peripheral after a connection.
        let remember: @Sendable (KnownPeripheral) async throws -> Void
    }

    /// Reports `event` numbered in the order the link decided its events, whichever of the link's
    /// tasks decided them; the gateway handles them in that order (``ArrivalOrder``).
    ///
    /// Each event leaves the link's thread through Swift's pool on its way to the gateway (the
    /// host's closures are not isolated), so two tasks' events could arrive in either order. After
    /// bluetoothd restarted without `-E` the gateway got `adapter_missing` (decided before the
    /// adapter was back, by the task following the central's state) after `monitor_unsupported`
    /// (decided by the task following the monitor manager), and `bridge/health` stayed at it (a
    /// stress run, 2026-12-05); a device's `connected` (its connect task) and `disconnected` (the
    /// disconnections' task) could cross the same way. The number is taken and the event handed
    /// over in one step of the link's executor, so every number reaches the host.
    func report(_ event: Event) async {
        eventNumber += 1
        await host.report(event, eventNumber)
    }
}
