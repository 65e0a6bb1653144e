import Bluetooth
import Foundation

/// The in-process control API: fault injection and observation (the control channel calls these).
extension BlueZSimulator {
    /// What the control channel reports about a device.
    package struct DeviceSnapshot: Sendable, Equatable {
        package var address: String
        package var name: String?
        /// The `Device1` object exists on the bus (discovery saw it, or it is known), so a client
        /// can call it now.
        package var present: Bool
        package var inRange: Bool
        package var connected: Bool
        package var servicesResolved: Bool
        package var paired: Bool
        package var trusted: Bool
        /// Characteristics (UUID strings) with notifications enabled.
        package var notifying: [String]
    }

    /// Drops the link of a connected device, as if the peer went away (Connected false, no Disconnect call).
    package func disconnect(address: String) async throws(SimulatorError) {
        let key = try device(address)
        guard devices[key]!.link != .disconnected else { return }
        await linkDown(key, pendingError: BlueZError.abortByLocal)
    }

    /// Moves a device out of range (no advertisements; its link drops) or back in range.
    package func setDeviceInRange(address: String, _ inRange: Bool) async throws(SimulatorError) {
        let key = try device(address)
        await setInRange(key, inRange)
    }

    /// Sets the RSSI the device is heard at from its next advertisement on (its scenario's `rssi`;
    /// the scenario's jitter still applies): a device moving nearer or away.
    package func setRSSI(address: String, _ rssi: Int16) throws(SimulatorError) {
        let key = try device(address)
        guard (-127...20).contains(rssi) else {
            throw SimulatorError(.invalidArguments, "rssi must be -127…20 dBm, not \(rssi)")
        }
        devices[key]!.spec.rssi = rssi
    }

    /// Makes bluetoothd's cached GATT database of the device lack `service` (``DeviceState/makeCacheStale(dropping:)``):
    /// the service's objects go now, and every later connection resolves without them (DB Hash match, discovery
    /// skipped) until the device is removed (`RemoveDevice`, or the temporary timeout of an unbonded device).
    /// The device must have been connected (its GATT objects exported).
    package func makeGATTCacheStale(address: String, service: String) async throws(SimulatorError) {
        let key = try device(address)
        guard let uuid = BluetoothUUID(service) else {
            throw SimulatorError(.invalidArguments, "not a UUID: \(service)")
        }
        guard devices[key]!.makeCacheStale(dropping: uuid),
            let definition = devices[key]!.gatt.services.first(where: { $0.uuid == uuid })
        else {
            throw SimulatorError(.invalidArguments, "\(address) has no cached service \(service) (connect it first)")
        }
        await unexportService(definition, of: devices[key]!.path)
    }

    /// Makes the next `count` connect attempts to the device fail.
    package func injectConnectFailure(address: String, _ failure: ConnectFailureKind, count: Int = 1)
        throws(SimulatorError)
    {
        let key = try device(address)
        guard count > 0 else { throw SimulatorError(.invalidArguments, "count must be at least 1") }
        devices[key]!.injectConnectFailures(failure, count: count)
    }

    /// Makes the next `count` `GetManagedObjects` calls fail with `NoReply`: what a client sees when
    /// bluetoothd owns its name but does not answer within the call's timeout (its main loop held
    /// up, as by a stuck controller), without the wait.
    package func failManagedObjects(count: Int) throws(SimulatorError) {
        guard count > 0 else { throw SimulatorError(.invalidArguments, "count must be at least 1") }
        managedObjectsFailures = count
    }

    /// Makes the next `count` `StartDiscovery` calls (while powered) fail as bluetoothd fails them
    /// when the controller refuses to start (the kernel busy stopping the last discovery, say):
    /// `InProgress` "Operation already in progress", with no session left behind.
    package func failDiscoveryStarts(count: Int) throws(SimulatorError) {
        guard count > 0 else { throw SimulatorError(.invalidArguments, "count must be at least 1") }
        discoveryStartFailures = count
    }

    /// Holds the answers to `StartDiscovery` until ``releaseDiscoveryStarts()``: the moment between
    /// a client's `SetDiscoveryFilter` and its `StartDiscovery` being answered, made as long as a
    /// test needs.
    package func holdDiscoveryStarts() {
        if heldDiscoveryStarts == nil { heldDiscoveryStarts = [] }
    }

    /// Answers the held `StartDiscovery` calls, and holds no more.
    package func releaseDiscoveryStarts() {
        let held = heldDiscoveryStarts ?? []
        heldDiscoveryStarts = nil
        for call in held { call.resume() }
    }

    /// How many `StartDiscovery` calls wait for ``releaseDiscoveryStarts()``.
    package var heldDiscoveryStartCount: Int { heldDiscoveryStarts?.count ?? 0 }

    /// How many `StartDiscovery` calls bluetoothd has had (answered or refused).
    package var startDiscoveryCallCount: Int { startDiscoveryCalls }

    /// How many `GetManagedObjects` calls bluetoothd has had (answered or failed) since the simulator started.
    package var managedObjectsCallCount: Int { managedObjectsCalls }

    /// Every write clients made to the device, oldest first.
    /// The pairing agents clients registered through `AgentManager1` (forgotten on a bluetoothd restart).
    package var pairingAgents: AgentRegistry { agents }

    package func writes(address: String) throws(SimulatorError) -> [RecordedWrite] {
        writes[try device(address)] ?? []
    }

    package func clearWrites(address: String) throws(SimulatorError) {
        writes[try device(address)] = []
    }

    /// The peer's current value of a characteristic (what a read would return); `service` picks
    /// between characteristics with the same UUID (default: the first).
    package func characteristicValue(address: String, uuid: String, service: String? = nil) throws(SimulatorError)
        -> [UInt8]
    {
        let key = try characteristic(address, uuid, service: service)
        return devices[key.address]!.characteristics[key.id]!.value
    }

    /// Sets the peer's value; with `notify`, subscribers receive it (when connected and notifying).
    package func setCharacteristicValue(
        address: String, uuid: String, service: String? = nil, value: [UInt8], notify: Bool
    ) throws(SimulatorError) {
        let key = try characteristic(address, uuid, service: service)
        updateValue(key, value, notify: notify)
    }

    /// Sends `count` notifications back to back (generator values, or the current value).
    package func burst(address: String, uuid: String, count: Int) throws(SimulatorError) {
        let key = try characteristic(address, uuid)
        guard count > 0, count <= 100_000 else { throw SimulatorError(.invalidArguments, "count must be 1…100000") }
        for _ in 0..<count {
            if generators[key] != nil {
                generatorTick(key)
            } else {
                updateValue(key, devices[key.address]!.characteristics[key.id]!.value)
            }
        }
    }

    /// Starts load mode with `devices` peripherals notifying `rate` times a second each (0 devices stops it,
    /// keeping its statistics).
    package func setLoad(devices count: Int, rate: Double) throws(SimulatorError) {
        guard (0...LoadDevices.maximumDevices).contains(count), count == 0 || (rate > 0 && rate <= 10_000) else {
            throw SimulatorError(
                .invalidArguments, "devices must be 0…\(LoadDevices.maximumDevices), rate 0 < rate ≤ 10000")
        }
        if count == 0 {
            // Stops sending; the statistics of the run stay readable.
            load.task?.cancel()
            load.task = nil
            load.run += 1
            if load.stoppedAt == nil { load.stoppedAt = clock.now }
            return
        }
        startLoad(devices: count, rate: rate)
    }

    /// The device's state once the changes of its objects in flight are on the bus (so `present`
    /// says what `GetManagedObjects` answers).
    package func snapshot(address: String) async throws(SimulatorError) -> DeviceSnapshot {
        let key = try self.device(address)
        await settleBusChanges(of: key)
        let device = devices[key]!
        return DeviceSnapshot(
            address: device.address.string, name: device.spec.name,
            present: device.exported && devicesOnBus.contains(key), inRange: device.inRange,
            connected: device.connected, servicesResolved: device.servicesResolved, paired: device.paired,
            trusted: device.trusted,
            notifying: device.characteristics.values.filter { $0.notifying || $0.notifyAcquired }.map(
                \.definition.uuid.uuidString
            )
            .sorted())
    }

    /// Addresses of every simulated device (scenario and load mode), in order.
    package func deviceAddresses() -> [String] { deviceOrder }

    /// Whether the adapter is powered.
    package var powered: Bool { adapter.powered }
}
