import Bluetooth
import DBus
import Foundation
import Logging
import Timekeeping

/// A virtual `org.bluez` (bluetoothd 5.66) on any D-Bus bus: the adapter, the scenario's devices,
/// their GATT trees and behaviour, plus fault injection and observation (see `docs/simulator.md`).
///
/// ```swift
/// let simulator = BlueZSimulator(scenario: try Scenario.load("demo"))
/// try await simulator.start(busAddress: bus.address)   // claims org.bluez and io.blebridge.Simulator
/// try await simulator.setCharacteristicValue(address: "C0:FF:EE:00:00:05", uuid: "6b1e0002-…", value: [1], notify: true)
/// await simulator.stop()
/// ```
package actor BlueZSimulator {
    /// Knobs for tests and the demo.
    package struct Options: Sendable {
        /// Seed for RSSI jitter and value generators (reproducible runs).
        package var seed: UInt64
        /// Replaces the scenario's timing (e.g. a short disconnect delay in tests).
        package var timing: ScenarioTiming?
        /// bluetoothd keeps the link for 2 s after `Disconnect` before it drops (`DISCONNECT_TIMER`).
        package var disconnectDelay: Duration
        /// Serve the control channel (`io.blebridge.Simulator`).
        package var controlChannel: Bool

        package init(
            seed: UInt64 = 1, timing: ScenarioTiming? = nil, disconnectDelay: Duration = .seconds(2),
            controlChannel: Bool = true
        ) {
            self.seed = seed
            self.timing = timing
            self.disconnectDelay = disconnectDelay
            self.controlChannel = controlChannel
        }
    }

    package let scenario: Scenario
    /// What the adapter offers of `AdvertisementMonitorManager1`: the scenario's
    /// `adapter.advertisement_monitor` until a restart says otherwise (``restartBluez(downtime:stop:advertisementMonitor:)``).
    var advertisementMonitor: ScenarioAdapter.AdvertisementMonitorMode
    let options: Options
    let timing: ScenarioTiming
    let adapterPath: String
    let log = Logger(label: "simulator")
    let clock = ContinuousClock()
    /// The wall-clock time of recorded writes (``RecordedWrite/time``).
    let wallClock: any BridgeClock = SystemClock()
    var startedAt: ContinuousClock.Instant

    var adapter: AdapterState
    var agents = AgentRegistry()
    var profiles = ProfileRegistry()
    /// Registered GATT applications and advertisements (the adapter's peripheral role).
    var peripheralRole = PeripheralRoleState(supportedInstances: BlueZSimulator.supportedAdvertisingInstances)
    /// The simulated remote central's notification subscriptions to local characteristics, and what it received.
    var remoteListeners: [BluetoothUUID: Task<Void, Never>] = [:]
    var remoteNotificationLog: [BluetoothUUID: [[UInt8]]] = [:]
    /// Devices by address string (`C0:FF:EE:00:00:01`), in scenario order.
    var devices: [String: DeviceState] = [:]
    var deviceOrder: [String] = []
    var random: SimulatorRandom
    var generators: [CharacteristicKey: ValueGenerator] = [:]
    var advertising: [String: AdvertisingSlot] = [:]
    var writes: [String: [RecordedWrite]] = [:]

    var busAddress: String?
    /// The connection owning `org.bluez`; replaced on a simulated bluetoothd restart (new unique name).
    var bluez: DBusConnection?
    var control: DBusConnection?
    /// Bumped on restart and stop so timers of an earlier incarnation do nothing.
    var generation = 0
    var worldTasks: [Task<Void, Never>] = []
    var bluezTasks: [Task<Void, Never>] = []
    var deviceTasks: [String: [Task<Void, Never>]] = [:]
    var connectAttempts: [String: Int] = [:]
    var pendingConnects: [String: [PendingConnect]] = [:]
    var pendingDisconnects: [String: [PendingDisconnect]] = [:]
    var disconnectTimers: Set<String> = []
    /// Devices whose objects ``unexportDevice(_:)`` is taking off the bus (a count per device: the
    /// removal suspends at each object). No advertisement is taken for them meanwhile: bluetoothd
    /// removes a device in one step, and one taken in between exported the device again only for the
    /// rest of the removal to take the new object away (issue 20).
    var unexporting: [String: Int] = [:]
    /// Devices whose `Device1` object is on the bus now: the model marks a device exported before
    /// the export (which suspends this actor) has put the object there, so a control-channel
    /// snapshot that said "present" from the model alone let a client call `Connect` on an object
    /// that did not exist yet (`UnknownObject`, seen under ThreadSanitizer at load 20).
    var devicesOnBus: Set<String> = []
    /// Devices whose `Device1` object ``exportDevice(_:on:)`` is putting on the bus (a count per
    /// device: the export suspends this actor until the connection's thread has done it).
    var exporting: [String: Int] = [:]
    /// Snapshots waiting for a device's exports and removals in flight to end
    /// (``settleBusChanges(of:)``).
    var busChangeWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    var sockets: [SocketKey: AcquiredSocket] = [:]
    /// Characteristics with a write request under way (bluetoothd's `chrc->write_op`): another
    /// `WriteValue` on one, from any client, is answered `InProgress` until it ends.
    var writesUnderWay: Set<CharacteristicKey> = []
    /// Operations waiting for a device's running pairing to end (``raiseSecurity(_:for:)``).
    var pairingWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    var load = LoadState()
    /// Passing mode's progress (``ScenarioPassing``).
    var passing = PassingStatistics(appeared: 0, gone: 0)
    var adapterAliasOverride: String?
    var adapterModes = AdapterModes()
    /// The running `Discoverable`/`Pairable` timeouts (cancelled when the mode or its timeout changes).
    var modeTimers: [String: Task<Void, Never>] = [:]
    /// Devices the scenario's second adapter has heard (exported under it), by address string.
    var secondAdapterDevices: [String: Int16] = [:]
    /// Descriptor values bluetoothd cached after a read (`GattDescriptor1.Value`).
    var descriptorCache: [DescriptorKey: [UInt8]] = [:]
    /// Values the peer's writable descriptors hold after a write.
    var descriptorWrites: [DescriptorKey: [UInt8]] = [:]
    /// Devices whose `Battery1` interface is exported (while connected and resolved).
    var batteryExported: Set<String> = []
    /// The controller is gone (``removeAdapter()``): no adapter object until ``addAdapter()``.
    var adapterRemoved = false
    /// Registered advertisement monitor applications (``ScenarioAdapter/advertisementMonitor``).
    var monitors = MonitorRegistry()
    /// ``setDeviceFoundFirst(_:)``.
    var deviceFoundFirst = false
    /// Successful `StartDiscovery` calls (``startDiscoveryCount``).
    var discoveryStarts = 0
    /// `GetManagedObjects` calls still to fail (``failManagedObjects(count:)``), and those answered or failed.
    var managedObjectsFailures = 0
    /// `StartDiscovery` calls still to be refused as the kernel refuses them (``failDiscoveryStarts(count:)``), and all calls.
    var discoveryStartFailures = 0
    var startDiscoveryCalls = 0
    /// `StartDiscovery` calls whose answer waits for ``releaseDiscoveryStarts()`` (nil: none is held).
    var heldDiscoveryStarts: [CheckedContinuation<Void, Never>]?
    /// Requests bluetoothd 5.82 never answers (``refusePairingUnanswered(_:)``), held until the simulator
    /// stops or restarts.
    var unansweredRequests: [CheckedContinuation<Void, Never>] = []
    var managedObjectsCalls = 0
    /// Whether `Discovering` true has been signalled since discovery last started. The adapter's state
    /// turns discovering with the `StartDiscovery` call, the signal follows the reply; advertisements
    /// are reported only after it, as bluetoothd reports devices found only after the controller's
    /// discovery started (bluetoothctl: "Discovering: yes" before the first "[NEW] Device").
    var discoveryAnnounced = false

    /// Identifies a characteristic of a device.
    struct CharacteristicKey: Hashable, Sendable {
        var address: String
        var id: GattDatabase.CharacteristicID
    }

    struct DescriptorKey: Hashable, Sendable {
        var characteristic: CharacteristicKey
        var index: Int
    }

    struct SocketKey: Hashable, Sendable {
        var characteristic: CharacteristicKey
        var notify: Bool
    }

    /// Advertised data a device sends, regenerated every update interval.
    struct AdvertisingSlot: Sendable {
        var manufacturer: [(company: UInt16, generator: ValueGenerator?, value: [UInt8])]
        var service: [(uuid: BluetoothUUID, generator: ValueGenerator?, value: [UInt8])]
        var lastUpdate: ContinuousClock.Instant?
    }

    package init(scenario: Scenario, options: Options = Options()) {
        self.scenario = scenario
        self.options = options
        self.timing = options.timing ?? scenario.timing
        self.adapterPath = "/org/bluez/" + scenario.adapter.id
        self.advertisementMonitor = scenario.adapter.advertisementMonitor
        self.adapter = AdapterState(powered: scenario.adapter.powered)
        self.random = SimulatorRandom(seed: options.seed)
        self.startedAt = ContinuousClock().now
        var devices: [String: DeviceState] = [:]
        var order: [String] = []
        var generators: [CharacteristicKey: ValueGenerator] = [:]
        var advertising: [String: AdvertisingSlot] = [:]
        for spec in scenario.devices {
            Self.add(
                spec, adapterPath: adapterPath, seed: options.seed, devices: &devices, order: &order,
                generators: &generators, advertising: &advertising)
        }
        self.devices = devices
        self.deviceOrder = order
        self.generators = generators
        self.advertising = advertising
    }

    /// Adds a device to the world (not yet visible: discovery finds it).
    func addDevice(_ spec: ScenarioDevice) {
        Self.add(
            spec, adapterPath: adapterPath, seed: options.seed, devices: &devices, order: &deviceOrder,
            generators: &generators, advertising: &advertising)
    }

    private static func add(
        _ spec: ScenarioDevice, adapterPath: String, seed baseSeed: UInt64, devices: inout [String: DeviceState],
        order: inout [String], generators: inout [CharacteristicKey: ValueGenerator],
        advertising: inout [String: AdvertisingSlot]
    ) {
        let key = spec.address.string
        guard devices[key] == nil else { return }
        var state = DeviceState(spec: spec, adapterPath: adapterPath)
        order.append(key)
        var seed = baseSeed &+ UInt64(order.count) &* 7919
        for (id, characteristic) in state.gatt.allCharacteristics {
            guard let generatorSpec = characteristic.spec.generator else { continue }
            seed &+= 104_729
            var generator = ValueGenerator(spec: generatorSpec, seed: seed)
            let initial = generator.next(elapsed: .zero)
            generators[CharacteristicKey(address: key, id: id)] = generator
            _ = state.withCharacteristicUnchecked(id) { $0.update(initial, connected: false) }
        }
        devices[key] = state
        var slot = AdvertisingSlot(manufacturer: [], service: [])
        for entry in spec.advertisement.manufacturerData {
            seed &+= 31
            slot.manufacturer.append(
                (entry.company, entry.generator.map { ValueGenerator(spec: $0, seed: seed) }, entry.value))
        }
        for entry in spec.advertisement.serviceData {
            seed &+= 37
            slot.service.append((entry.uuid, entry.generator.map { ValueGenerator(spec: $0, seed: seed) }, entry.value))
        }
        advertising[key] = slot
    }

    // MARK: Lifecycle

    /// Claims `org.bluez` (and the control name) on the bus at `busAddress` and starts the world.
    package func start(busAddress: String) async throws {
        guard self.busAddress == nil else { return }
        self.busAddress = busAddress
        startedAt = clock.now
        generation += 1
        if options.controlChannel {
            let control = try await DBusConnection(address: busAddress)
            self.control = control
            try await exportControl(on: control)
            guard try await control.requestName(SimulatorNames.control) == .primaryOwner else {
                throw SimulatorError(.nameTaken, "\(SimulatorNames.control) is already owned on \(busAddress)")
            }
        }
        try await bringUpBluez()
        startWorld()
        log.info(
            "simulator running", [("scenario", scenario.name), ("bus", busAddress), ("devices", "\(devices.count)")])
    }

    /// Releases the names, closes the connections and stops every timer.
    package func stop() async {
        generation += 1
        releaseDiscoveryStarts()
        for task in worldTasks + bluezTasks + Array(remoteListeners.values) { task.cancel() }
        remoteListeners = [:]
        worldTasks = []
        bluezTasks = []
        cancelAllDeviceTasks()
        failAllPending()
        for socket in sockets.values { socket.close() }
        sockets = [:]
        load.task?.cancel()
        load.task = nil
        bluez?.close()
        control?.close()
        bluez = nil
        devicesOnBus = []
        control = nil
        busAddress = nil
    }

    /// Opens a fresh connection, exports the tree and claims `org.bluez` (start, or after a restart).
    func bringUpBluez() async throws {
        guard let busAddress else { throw SimulatorError(.notRunning, "the simulator is not running") }
        let connection = try await DBusConnection(address: busAddress)
        bluez = connection
        // bluetoothd's gdbus matches a method by name and signature: a wrong signature is UnknownMethod.
        try await connection.addObjectManager(at: .root, signatureMismatch: .unknownMethod) { [weak self] in
            try await self?.answerManagedObjects()
        }
        guard try await connection.requestName(SimulatorNames.bluez) == .primaryOwner else {
            connection.close()
            bluez = nil
            throw SimulatorError(
                .nameTaken, "org.bluez is already owned on \(busAddress); is bluetoothd or another simulator running?")
        }
        try await exportRoot(on: connection)
        if !adapterRemoved {
            try await exportAdapter(on: connection)
            for key in deviceOrder where devices[key]!.exported {
                try await exportDevice(key, on: connection)
            }
        }
        try await exportSecondAdapter(on: connection)
        let changes = try await connection.nameOwnerChanges()
        let generation = self.generation
        bluezTasks.append(
            Task { [weak self] in
                for await change in changes where change.newOwner == nil && change.name.hasPrefix(":") {
                    await self?.clientVanished(change.name, generation: generation)
                }
            })
    }

    /// Simulates bluetoothd restarting: `org.bluez` vanishes with every object, then comes back
    /// after `downtime` with a new unique name; devices known from storage (connected or paired
    /// before) reappear disconnected, discovery sessions, agents and notification sessions are gone.
    /// After `.terminate` the adapter comes back off, with its devices, and is then powered.
    /// `stop` says how it goes away: killed (only `NameOwnerChanged`), or terminated (it powers off
    /// and removes its objects first, ``BluezStop``). `advertisementMonitor`, when given, is what the
    /// restarted bluetoothd offers (`.absent`: started without `-E`).
    package func restartBluez(
        downtime: Duration = .seconds(1), stop: BluezStop = .kill,
        advertisementMonitor: ScenarioAdapter.AdvertisementMonitorMode? = nil
    ) async throws {
        guard bluez != nil else { throw SimulatorError(.notRunning, "the simulator is not running") }
        if stop == .terminate { await terminateCleanly() }
        generation += 1
        discoveryAnnounced = false
        for task in bluezTasks { task.cancel() }
        bluezTasks = []
        cancelAllDeviceTasks()
        failAllPending()
        for socket in sockets.values { socket.close() }
        sockets = [:]
        bluez?.close()
        bluez = nil
        devicesOnBus = []
        agents = AgentRegistry()
        profiles = ProfileRegistry()
        monitors = MonitorRegistry()
        batteryExported = []
        peripheralRole = PeripheralRoleState(supportedInstances: Self.supportedAdvertisingInstances)
        // A terminated bluetoothd powered its controller off; a killed one left it on. The restarted
        // bluetoothd registers the adapter as the kernel reports it, then loads its stored devices
        // (src/adapter.c: adapter_register, then load_devices), then, when it was off, powers it
        // (AutoEnable, Debian's default): after SIGTERM, `Powered` true comes after the devices.
        adapter = AdapterState(powered: stop == .kill)
        for key in deviceOrder {
            devices[key]!.bluetoothdRestarted()
            pairingEnded(key)
        }
        secondAdapterDevices = [:]
        if let advertisementMonitor { self.advertisementMonitor = advertisementMonitor }
        log.notice(
            "org.bluez released (simulated bluetoothd restart)",
            [("downtime", "\(downtime)"), ("signal", stop.rawValue)])
        // Real delay: the simulated bluetoothd restart's downtime.
        try await Task.sleep(for: downtime)
        try await bringUpBluez()
        if !adapter.powered, !adapterRemoved { await setPowered(true) }
        log.notice("org.bluez back")
    }

    var elapsed: Duration { clock.now - startedAt }

    func cancelAllDeviceTasks() {
        for tasks in deviceTasks.values { for task in tasks { task.cancel() } }
        deviceTasks = [:]
        disconnectTimers = []
        connectAttempts = [:]
    }

    /// Fails every waiting Connect and releases every waiting Disconnect (their replies go nowhere after a restart).
    func failAllPending() {
        for waiters in pendingConnects.values {
            for waiter in waiters { waiter.continuation.resume(throwing: BlueZError.abortByLocal.dbus) }
        }
        pendingConnects = [:]
        for waiters in pendingDisconnects.values { for waiter in waiters { waiter.continuation.resume() } }
        pendingDisconnects = [:]
        for waiter in unansweredRequests { waiter.resume() }
        unansweredRequests = []
    }

    // MARK: Lookup

    func key(forDevicePath path: String) throws(DBusError) -> String {
        guard let address = BluetoothAddress.fromDevicePath(path), devices[address] != nil, devices[address]!.exported
        else {
            throw DBusError(name: .unknownObject, message: "Unknown object '\(path)'")
        }
        return address
    }

    func device(_ address: String) throws(SimulatorError) -> String {
        guard let parsed = BluetoothAddress(address), devices[parsed.string] != nil else {
            throw SimulatorError(.unknownDevice, "no device \(address) in scenario \(scenario.name)")
        }
        return parsed.string
    }

    func characteristic(_ address: String, _ uuid: String, service: String? = nil) throws(SimulatorError)
        -> CharacteristicKey
    {
        let key = try device(address)
        let serviceUUID = service.flatMap(BluetoothUUID.init)
        guard service == nil || serviceUUID != nil, let parsed = BluetoothUUID(uuid),
            let id = devices[key]!.gatt.characteristic(uuid: parsed, service: serviceUUID)
        else {
            throw SimulatorError(
                .unknownCharacteristic,
                "device \(key) has no characteristic \(uuid)" + (service.map { " in service \($0)" } ?? ""))
        }
        return CharacteristicKey(address: key, id: id)
    }
}

extension BluetoothAddress {
    /// `C0:FF:EE:00:00:01` from `/org/bluez/hci0/dev_C0_FF_EE_00_00_01` (and paths below it).
    static func fromDevicePath(_ path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count >= 4, parts[3].hasPrefix("dev_") else { return nil }
        return BluetoothAddress(parts[3].dropFirst(4).replacingOccurrences(of: "_", with: ":"))?.string
    }
}

extension BlueZError {
    /// The D-Bus error a handler throws to reply with this error.
    var dbus: DBusError { DBusError(name: DBusErrorName(name), message: message) }
}

extension SimulatorError {
    var dbus: DBusError { DBusError(name: DBusErrorName(dbusName), message: message) }
}
