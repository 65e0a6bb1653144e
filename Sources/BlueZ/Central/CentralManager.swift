import Bluetooth
import DBus
import Foundation
import Timekeeping

/// The central role on BlueZ (`CBCentralManager`): adapter state, scanning, connecting.
///
/// ```swift
/// let manager = try await CentralManager(connection: try await DBusConnection.system())
/// for await discovery in try await manager.scan(services: [BluetoothUUID(UInt16(0x180D))]) { … }
/// try await manager.connect(peripheral)          // returns when services are resolved
/// ```
///
/// The manager follows BlueZ's rules: match rules are added before `GetManagedObjects`; one discovery session is
/// shared by all scanners; `connect` waits for `ServicesResolved` and handles `InProgress`; devices BlueZ caches
/// but nobody needs are removed after `deviceTimeToLive`, so memory stays bounded among passing random-address
/// devices. Its state follows BlueZ: `unsupported` without `org.bluez` or the adapter, `poweredOff`,
/// `resetting` while bluetoothd restarts, `unauthorized` when D-Bus denies access.
///
/// Threads: the manager, its peripherals and its pairing agent are pinned to the D-Bus connection's
/// thread (``DBusConnection/serialExecutor``). BlueZ's signals reach them there as they are
/// dispatched, through a handler that enters the manager with `assumeIsolated` (no stream, no task,
/// no hop), and the manager updates its peripherals with plain calls, in bus order. Nothing here
/// blocks: BlueZ calls are awaited, and their replies come back on the same thread.
public actor CentralManager {
    public struct Options: Sendable {
        /// The adapter (`hci0`).
        public var adapter: String
        /// Devices not seen for this long are removed from BlueZ's cache (unless connected, paired or trusted).
        public var deviceTimeToLive: Duration
        /// At most this many devices are kept in BlueZ's cache.
        public var maximumCachedDevices: Int
        /// How often the cache is swept.
        public var cacheSweepInterval: Duration
        /// Timeout of each BlueZ call other than `Connect`.
        public var callTimeout: Duration
        /// Retry behaviour of `connect` (InProgress, aborted connections).
        public var connection: ConnectionLifecycle.Configuration

        // Pairing (see CentralManager+Pairing.swift).
        /// How the agent answers pairing questions when `pair` is given no policy, and for pairings the peer starts.
        public var pairing: PairingPolicy
        /// A read, write, descriptor operation or notification subscription that fails with
        /// `insufficientAuthentication` pairs (with `pairing`) and is retried once.
        public var pairOnInsufficientAuthentication: Bool
        /// How long such an automatic pairing may take.
        public var pairingTimeout: Duration
        /// Where the `org.bluez.Agent1` object is exported.
        public var agentPath: DBusObjectPath
        /// Make the agent BlueZ's default agent when registering it (`RequestDefaultAgent`).
        public var requestsDefaultAgent: Bool
        /// When a device was last seen and the cache sweep's period read it, and the timeouts and
        /// retry delays of connects, `waitUntilPoweredOn`, `waitForCharacteristic` and monitor
        /// activation (a test's `ManualClock` ages the cache and runs out timeouts without waiting).
        public var clock: any BridgeClock

        public init(
            adapter: String = "hci0", deviceTimeToLive: Duration = .seconds(300), maximumCachedDevices: Int = 512,
            cacheSweepInterval: Duration = .seconds(30), callTimeout: Duration = .seconds(25),
            connection: ConnectionLifecycle.Configuration = ConnectionLifecycle.Configuration(),
            pairing: PairingPolicy = PairingPolicy(), pairOnInsufficientAuthentication: Bool = false,
            pairingTimeout: Duration = .seconds(60), agentPath: DBusObjectPath = "/io/blebridge/agent",
            requestsDefaultAgent: Bool = true, clock: any BridgeClock = SystemClock()
        ) {
            self.clock = clock
            self.adapter = adapter
            self.deviceTimeToLive = deviceTimeToLive
            self.maximumCachedDevices = maximumCachedDevices
            self.cacheSweepInterval = cacheSweepInterval
            self.callTimeout = callTimeout
            self.connection = connection
            self.pairing = pairing
            self.pairOnInsufficientAuthentication = pairOnInsufficientAuthentication
            self.pairingTimeout = pairingTimeout
            self.agentPath = agentPath
            self.requestsDefaultAgent = requestsDefaultAgent
        }
    }

    public nonisolated let connection: DBusConnection
    public nonisolated let options: Options
    nonisolated let adapterPath: DBusObjectPath
    /// The D-Bus connection's thread (see the type's comment).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.serialExecutor }
    /// The pairing agent (registered on the first `pair`, unregistered by `close`).
    public nonisolated let agent: PairingAgent
    private nonisolated let stateBroadcaster = Broadcaster<ManagerState>(initial: .unknown, replaysLatest: true)
    private nonisolated let disconnectBroadcaster = Broadcaster<DisconnectEvent>(replaysLatest: false)
    nonisolated let monitorManagerBroadcaster = Broadcaster<Bool>(replaysLatest: false)
    private nonisolated let removalBroadcaster = Broadcaster<BluetoothAddress>(replaysLatest: false)

    private var tracker = AdapterStateTracker()
    private var arbiter = DiscoveryArbiter<Int>()
    var scanners: [Int: Scanner] = [:]
    var nextScannerID = 0
    var objects = ManagedObjects()
    /// The advertisement monitors of a listen-only scan (``startMonitoring(_:allowDuplicates:rssiThreshold:timeout:)``).
    var monitoring: MonitorSession?
    private var lastSeen: [DBusObjectPath: ContinuousClock.Instant] = [:]
    private var peripherals: [DBusObjectPath: Peripheral] = [:]
    private var loading = true
    private var buffered: [DBusSignal] = []
    /// The `GetManagedObjects` under way (`loading`), which `init` waits for.
    private var loadTask: Task<Void, Never>?
    private var tasks: [Task<Void, Never>] = []
    /// bluetoothd's signals and its name's owner changes, handled on the connection's thread.
    private var signalHandlers: [DBusSignalHandler] = []
    /// One `GetManagedObjects` shared by the connects that end at about the same time (`CentralManager+Snapshot`).
    var snapshots = SnapshotCoalescer()
    var snapshotWaiters: [UInt64: [CheckedContinuation<SnapshotWake, Never>]] = [:]
    var closed = false
    /// The ``DBusSignal/sequence`` of the last bluetoothd signal handled, and the method calls
    /// (`DeviceFound`) waiting for one (``waitForSignals(through:)``).
    var signalsHandled: UInt64 = 0
    var signalWaiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    /// The bus's refusal behind an `unauthorized` state (dbus-daemon's text names the user's uid and
    /// the call it rejected), kept for the log; nil until access was denied.
    public private(set) var accessDeniedError: DBusError?

    struct Scanner {
        let filter: DiscoveryFilter
        /// Fed by advertisement monitors (devices they found), not by the discovery session.
        var monitor = false
        let continuation: AsyncStream<Discovery>.Continuation
        var reported: [DBusObjectPath: AdvertisementData] = [:]
    }

    /// Connects the manager to BlueZ on `connection` and returns once the initial state is known.
    public init(connection: DBusConnection, options: Options = Options()) async throws {
        self.connection = connection
        self.options = options
        self.agent = PairingAgent(connection: connection, path: options.agentPath, policy: options.pairing)
        self.adapterPath = DBusObjectPath(validating: BlueZPaths.adapter(options.adapter)) ?? "/org/bluez/hci0"
        // Match rules first, then GetManagedObjects: nothing between the two is missed. The
        // handlers run on the connection's thread, this actor's executor: they enter it directly.
        signalHandlers.append(
            try await connection.signalHandler(matching: DBusMatchRule(sender: BlueZNames.service)) {
                [weak self] signals in
                self?.assumeIsolated { manager in
                    for signal in signals { manager.receive(signal) }
                }
            })
        signalHandlers.append(
            try await connection.nameOwnerChangeHandler(BlueZNames.service) { [weak self] change in
                self?.assumeIsolated { $0.bluezOwnerChanged(present: change.newOwner != nil) }
            })
        let present = (try? await connection.nameOwner(BlueZNames.service)) != nil
        bluezOwnerChanged(present: present)
        await loadTask?.value
        let sweepInterval = options.cacheSweepInterval
        let clock = options.clock
        tasks.append(
            Task { [weak self] in
                while !Task.isCancelled {
                    // Real delay: the period of the sweep that forgets devices unseen for `deviceTimeToLive`.
                    try? await clock.sleep(for: sweepInterval)
                    guard let self else { return }
                    await self.sweepDeviceCache()
                }
            })
    }

    /// A manager on the bus at `busAddress` (`unix:path=…`), or on the system bus (honouring
    /// `DBUS_SYSTEM_BUS_ADDRESS`) when nil.
    public static func connect(busAddress: String? = nil, options: Options = Options()) async throws -> CentralManager {
        let bus = try await BlueZBus(busAddress.map { .address($0) } ?? .system)
        return try await CentralManager(bus: bus, options: options)
    }

    /// Stops everything: the pairing agent is unregistered, scanners end, connections are left to BlueZ, streams
    /// finish.
    public func close() async {
        await stopMonitoring()
        await agent.unregister()
        closed = true
        signalHandled(.max)
        for handler in signalHandlers { handler.cancel() }
        signalHandlers.removeAll()
        for task in tasks { task.cancel() }
        tasks.removeAll()
        for scanner in scanners.values { scanner.continuation.finish() }
        scanners.removeAll()
        stateBroadcaster.finish()
        disconnectBroadcaster.finish()
        monitorManagerBroadcaster.finish()
        removalBroadcaster.finish()
    }

    // MARK: State

    /// The current state (`CBManagerState`).
    public var state: ManagerState { tracker.state }

    /// State changes, starting with the current state.
    public nonisolated var stateUpdates: AsyncStream<ManagerState> { stateBroadcaster.subscribe() }

    /// Whether the adapter shows `AdvertisementMonitorManager1`, each time BlueZ's objects may have
    /// changed that (loaded, an adapter interface added or removed, bluetoothd gone); repeats are possible.
    public nonisolated var monitorManagerUpdates: AsyncStream<Bool> { monitorManagerBroadcaster.subscribe() }

    /// Every peripheral disconnect, with its reason.
    public nonisolated var disconnections: AsyncStream<DisconnectEvent> { disconnectBroadcaster.subscribe() }

    /// The address of every device object of this adapter that BlueZ removed (`InterfacesRemoved`):
    /// bluetoothd removes an object it made for an advertiser (temporary: never connected, paired or
    /// trusted) once the device has not advertised for its `TemporaryTimeout` (30 s by default; each
    /// advertising report restarts it), and any object on `RemoveDevice` (this manager's cache sweep
    /// included). While the object stays, a device reported once is still advertising, even when
    /// nothing it sends changes (no signal then).
    public nonisolated var deviceRemovals: AsyncStream<BluetoothAddress> { removalBroadcaster.subscribe() }

    /// Waits until the state is `poweredOn`, or throws the state's error after `timeout`.
    public func waitUntilPoweredOn(timeout: Duration = .seconds(10)) async throws {
        if tracker.state == .poweredOn { return }
        let updates = stateUpdates
        await Deadline.run(until: options.clock.now + timeout, clock: options.clock) {
            for await state in updates where state == .poweredOn { return }
        }
        if tracker.state != .poweredOn { throw tracker.state.operationError ?? BluetoothError(.timeout) }
    }

    private func requirePoweredOn() throws(BluetoothError) {
        if let error = tracker.state.operationError { throw error }
    }

    // MARK: Scanning

    /// Scans for peripherals (`scanForPeripherals(withServices:options:)`). The stream ends when the consumer
    /// stops; discovery stops when the last scanner ends. Scanning pauses while the adapter is off and resumes
    /// when it is back. With `allowDuplicates` false, a peripheral is reported when first seen and whenever its
    /// advertisement changes; with true, on every advertising report (RSSI updates included).
    public func scan(
        services: [BluetoothUUID] = [], allowDuplicates: Bool = false, rssiThreshold: Int? = nil
    ) throws(BluetoothError) -> AsyncStream<Discovery> {
        try requirePoweredOn()
        nextScannerID += 1
        let id = nextScannerID
        let filter = DiscoveryFilter(
            services: Set(services), rssiThreshold: rssiThreshold, allowDuplicates: allowDuplicates)
        let (stream, continuation) = AsyncStream.makeStream(of: Discovery.self, bufferingPolicy: .bufferingNewest(1024))
        scanners[id] = Scanner(filter: filter, continuation: continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.scannerEnded(id) }
        }
        runDiscovery(arbiter.handle(.scannerAdded(id, filter)))
        return stream
    }

    /// True while this process's discovery session runs.
    public var isScanning: Bool { arbiter.isDiscovering }

    private func scannerEnded(_ id: Int) {
        guard scanners.removeValue(forKey: id) != nil else { return }
        runDiscovery(arbiter.handle(.scannerRemoved(id)))
    }

    private func runDiscovery(_ actions: [DiscoveryArbiter<Int>.Action]) {
        for action in actions {
            switch action {
            case .failScanners(let ids, _):
                for id in ids { scanners.removeValue(forKey: id)?.continuation.finish() }
            case .setFilter(let filter):
                var properties: [String: DBusValue] = [
                    "Transport": .string("le"), "DuplicateData": .boolean(filter.allowDuplicates),
                ]
                if !filter.services.isEmpty {
                    properties["UUIDs"] = .strings(filter.services.sorted().map(\.uuidString))
                }
                if let rssi = filter.rssiThreshold { properties["RSSI"] = .int16(Int16(clamping: rssi)) }
                adapterCall("SetDiscoveryFilter", [.properties(properties)])
            case .startDiscovery: adapterCall("StartDiscovery", [])
            case .stopDiscovery: adapterCall("StopDiscovery", [])
            }
        }
    }

    /// The call's result reaches the arbiter under the call's number: it may come after the
    /// adapter's signals that made it stale (replies and signals take different paths here).
    private func adapterCall(_ method: String, _ arguments: [DBusValue]) {
        let connection = self.connection
        let path = adapterPath
        let timeout = options.callTimeout
        let number = arbiter.lastCall
        Task {
            do {
                _ = try await connection.call(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.adapter, method: method,
                    arguments: arguments, timeout: timeout)
                self.discoveryCallFinished(number, nil)
            } catch {
                self.discoveryCallFinished(number, BluetoothError.from(error, during: .discovery))
            }
        }
    }

    private func discoveryCallFinished(_ number: Int, _ error: BluetoothError?) {
        runDiscovery(arbiter.handle(error.map { .callFailed(number, $0) } ?? .callSucceeded(number)))
    }

    /// Reports a device of this manager's adapter to the scanners (devices under other adapters,
    /// `/org/bluez/hci1/…` for a manager on `hci0`, are not ours and are ignored).
    /// `advertisingReport`: an advertisement arrived without changing a property (a monitor's
    /// `DeviceFound`), reported again when duplicates are allowed, as is a signal of `RSSI`,
    /// `ManufacturerData` or `ServiceData` whose value did not change.
    func reportDiscovery(_ path: DBusObjectPath, changed: Set<String>, advertisingReport: Bool = false) {
        let discovering = arbiter.isDiscovering || arbiter.isBusy
        let monitored = monitoring?.lifecycle.follows(path) ?? false
        guard !scanners.isEmpty, discovering || monitored, isOurDevice(path),
            let properties = objects.properties(path, BlueZNames.device),
            let address = DeviceProperties.address(properties)
        else { return }
        let advertisement = DeviceProperties.advertisement(properties)
        let rssi = DeviceProperties.rssi(properties)
        let peripheral = self.peripheral(for: path, address: address)
        let now = options.clock.now
        // An advertisement heard again: a new RSSI, or (DuplicateData) bluetoothd's signal of the
        // same data again, which it sends for every advertisement while RSSI comes only when it
        // changes; or a monitor's `DeviceFound`.
        let again =
            changed.contains("RSSI") || changed.contains("ManufacturerData") || changed.contains("ServiceData")
            || advertisingReport
        // By id, with no copy of a scanner held while its table is written: a copy kept the table
        // shared, so recording one advertisement copied the whole table (every device it reported).
        for id in scanners.keys.sorted() {
            guard
                let continuation = reportable(
                    by: id, path, advertisement, rssi: rssi, again: again, discovering: discovering,
                    monitored: monitored)
            else { continue }
            scanners[id]?.reported[path] = advertisement
            continuation.yield(
                Discovery(peripheral: peripheral, advertisementData: advertisement, rssi: rssi, timestamp: now))
        }
    }

    /// The stream of scanner `id` when it reports this advertisement of `path`: the scanner's kind
    /// (discovery or monitor) hears it, its filter admits it, and it is new, changed, or again with
    /// duplicates allowed.
    private func reportable(
        by id: Int, _ path: DBusObjectPath, _ advertisement: AdvertisementData, rssi: Int?, again: Bool,
        discovering: Bool, monitored: Bool
    ) -> AsyncStream<Discovery>.Continuation? {
        guard let scanner = scanners[id], scanner.monitor ? monitored : discovering,
            scanner.filter.admits(advertisement, rssi: rssi)
        else { return nil }
        let reported = scanner.reported[path]
        guard reported == nil || reported != advertisement || (scanner.filter.allowDuplicates && again) else {
            return nil
        }
        return scanner.continuation
    }

    /// Whether `path` is a device object of this manager's adapter.
    func isOurDevice(_ path: DBusObjectPath) -> Bool {
        path.isDescendant(of: adapterPath, orEqual: false)
    }

    // MARK: Peripherals

    /// Peripherals BlueZ knows with these addresses (`retrievePeripherals(withIdentifiers:)`); unknown ones are
    /// left out.
    public func retrievePeripherals(withIdentifiers identifiers: [BluetoothAddress]) -> [Peripheral] {
        identifiers.compactMap { address in
            let path = devicePath(address)
            guard let properties = objects.properties(path, BlueZNames.device),
                let known = DeviceProperties.address(properties)
            else { return nil }
            return peripheral(for: path, address: known)
        }
    }

    /// Peripherals BlueZ reports as connected (`retrieveConnectedPeripherals(withServices:)`).
    public func retrieveConnectedPeripherals(withServices services: [BluetoothUUID] = []) -> [Peripheral] {
        objects.paths(with: BlueZNames.device).filter(isOurDevice).sorted().compactMap { path in
            guard let properties = objects.properties(path, BlueZNames.device),
                properties["Connected"]?.asBool == true, let address = DeviceProperties.address(properties),
                DeviceProperties.advertisement(properties).advertisesAny(of: services)
            else { return nil }
            return peripheral(for: path, address: address)
        }
    }

    /// Connects and resolves services (`connect(_:options:)`); returns when the peripheral is usable. Throws
    /// `connectionTimeout` after `timeout`, `connectionFailed` with BlueZ's reason, `operationCancelled` when
    /// `cancelConnection` is called meanwhile, `notPoweredOn` and friends in other states.
    public func connect(_ peripheral: Peripheral, timeout: Duration = .seconds(30)) async throws {
        try requirePoweredOn()
        guard objects.properties(peripheral.path, BlueZNames.device) != nil else {
            throw BluetoothError(.unknownDevice, "BlueZ does not know \(peripheral.identifier); scan for it first")
        }
        if options.pairOnInsufficientAuthentication, options.requestsDefaultAgent {
            // bluetoothd pairs by itself when the peer refuses a request for want of security (it raises
            // the link's security and asks the default agent): be that agent before the first request.
            try? await registerAgent()
        }
        // The GATT objects bluetoothd exports before the connection (its cached copy, kept while disconnected).
        let before = objects.descendants(of: peripheral.path).mapValues { Set($0.keys) }
        try await peripheral.connect(timeout: timeout)
        await resynchroniseGATT(of: peripheral, exportedBefore: before)
    }

    /// Once services are resolved, `GetManagedObjects` is the truth about the peripheral's GATT
    /// tree; signals alone are not enough:
    /// - bluetoothd emits `ServicesResolved` and the GATT objects' `InterfacesAdded` from separate
    ///   deferred callbacks, so `ServicesResolved` can arrive before the last services are announced
    ///   (seen with real bluetoothd 5.66 in the VM tier: a connect returned with only 1801 known);
    /// - bluetoothd keeps a device and its GATT objects across an adapter power cycle and, finding
    ///   the same database on reconnect ("DB Hash match: skipping discovery"), announces nothing,
    ///   while the peripheral forgot its tree when the adapter went off.
    /// So the peripheral's tree is replaced by the one bluetoothd reports now. When that tree is exactly
    /// `exportedBefore` (non-empty), bluetoothd's cached copy stood and nothing was discovered
    /// (``Peripheral/gattCacheReused``).
    private func resynchroniseGATT(
        of peripheral: Peripheral, exportedBefore: [DBusObjectPath: Set<String>]
    ) async {
        guard let all = await managedObjectsSnapshot() else {
            await peripheral.replaceGATT(nil, cacheReused: false)
            return
        }
        var tree: [DBusObjectPath: [String: ManagedObjects.Properties]] = [:]
        for (path, value) in all where path.isDescendant(of: peripheral.path, orEqual: false) {
            tree[path] = ManagedObjects.interfaces(value)
        }
        for (path, interfaces) in objects.descendants(of: peripheral.path) where tree[path] == nil {
            objects.remove(path, Array(interfaces.keys))
        }
        for (path, interfaces) in tree { objects.add(path, interfaces) }
        let reused = !exportedBefore.isEmpty && tree.mapValues { Set($0.keys) } == exportedBefore
        await peripheral.replaceGATT(tree, cacheReused: reused)
    }

    /// Disconnects, or abandons a pending connect (`cancelPeripheralConnection(_:)`).
    public func cancelConnection(_ peripheral: Peripheral) async {
        await peripheral.cancelConnection()
    }

    /// Disconnects, or abandons a pending connect, and returns once BlueZ reports the link down
    /// (see `Peripheral.disconnect()`); returns early when the calling task is cancelled.
    public func disconnect(_ peripheral: Peripheral) async {
        await peripheral.disconnect()
    }

    private func devicePath(_ address: BluetoothAddress) -> DBusObjectPath {
        DBusObjectPath(validating: BlueZPaths.device(address, adapter: options.adapter)) ?? adapterPath
    }

    private func peripheral(for path: DBusObjectPath, address: BluetoothAddress) -> Peripheral {
        if let existing = peripherals[path] { return existing }
        let broadcaster = disconnectBroadcaster
        var pairing: (@Sendable (Peripheral, BluetoothError) async throws -> Void)?
        if options.pairOnInsufficientAuthentication {
            pairing = { [weak self] peripheral, error in
                try await self?.pairForAuthentication(peripheral, error: error)
            }
        }
        let peripheral = Peripheral(
            identifier: address, path: path, connection: connection, lifecycle: options.connection,
            callTimeout: options.callTimeout, clock: options.clock, onDisconnect: { broadcaster.yield($0) },
            authenticationHandler: pairing)
        peripherals[path] = peripheral
        let device = objects.properties(path, BlueZNames.device) ?? [:]
        let tree = objects.descendants(of: path)
        update(peripheral) { peripheral in
            peripheral.deviceAdded(device)
            for (gattPath, interfaces) in tree { peripheral.gattAdded(gattPath, interfaces) }
        }
        return peripheral
    }

    // MARK: BlueZ presence and objects

    private func bluezOwnerChanged(present: Bool) {
        if !present {
            agent.assumeIsolated { $0.bluezVanished() }
            objects.removeAll()
            lastSeen.removeAll()
            monitorManagerChanged()
            for peripheral in peripherals.values { update(peripheral) { $0.adapterLost(.bluezRestarted) } }
            runDiscovery(arbiter.handle(.adapterAvailable(false)))
        }
        track(.bluezPresent(present))
    }

    /// bluetoothd (re)exported `AgentManager1`: the agent registers again, in a task (it awaits BlueZ).
    private func agentManagerAppeared() {
        let agent = self.agent
        Task { await agent.agentManagerAppeared() }
    }

    private func perform(_ action: AdapterStateTracker.Action) {
        switch action {
        case .stateChanged(let state): stateBroadcaster.yield(state)
        case .loadObjects:
            // From here until the reply is applied, signals wait in `buffered` (replayed in order).
            loading = true
            buffered.removeAll()
            loadTask = Task { await self.loadObjects() }
        }
    }

    private func track(_ event: AdapterStateTracker.Event) {
        for action in tracker.handle(event) { perform(action) }
    }

    private func loadObjects() async {
        do {
            let reply = try await connection.call(
                destination: BlueZNames.service, path: .root, interface: BlueZNames.objectManager,
                method: "GetManagedObjects", timeout: options.callTimeout)
            objects = ManagedObjects(reply: reply.first ?? .array(elementSignature: "y", []))
        } catch let error as DBusError where error.name == .accessDenied {
            loading = false
            accessDeniedError = error
            track(.accessDenied)
            return
        } catch {
            loading = false
            if (try? await connection.nameOwner(BlueZNames.service)) == nil { track(.bluezPresent(false)) }
            return
        }
        let now = options.clock.now
        for path in objects.paths(with: BlueZNames.device) where path.isDescendant(of: adapterPath) {
            lastSeen[path] = now
        }
        for (path, peripheral) in peripherals {
            guard let device = objects.properties(path, BlueZNames.device) else {
                // bluetoothd came back without this device (a restarted one exports only those it
                // stored: connected or paired before); it sent no InterfacesRemoved for it, so it is
                // forgotten here as that signal would: else every address present at a restart (a
                // crowd of passing phones) would stay in these tables for good.
                update(peripheral) { $0.deviceRemoved() }
                peripherals[path] = nil
                continue
            }
            let tree = objects.descendants(of: path)
            update(peripheral) { peripheral in
                peripheral.deviceAdded(device)
                for (gattPath, interfaces) in tree { peripheral.gattAdded(gattPath, interfaces) }
            }
        }
        for (id, scanner) in scanners {
            let kept = scanner.reported.filter { objects.properties($0.key, BlueZNames.device) != nil }
            scanners[id]?.reported = kept
        }
        if objects.properties(PairingAgent.managerPath, BlueZNames.agentManager) != nil { agentManagerAppeared() }
        let adapter = objects.properties(adapterPath, BlueZNames.adapter)
        let powered = adapter?["Powered"]?.asBool ?? false
        track(.objectsLoaded(adapterPresent: adapter != nil, powered: powered))
        runDiscovery(arbiter.handle(.adapterAvailable(adapter != nil && powered)))
        monitorManagerChanged()
        loading = false
        let replay = buffered
        buffered.removeAll()
        for signal in replay { dispatch(signal) }
    }

    /// What the adapter offers for listen-only scanning through advertisement monitors, from
    /// the objects BlueZ reported (nil while the adapter is absent).
    public func advertisementMonitorSupport() -> AdvertisementMonitorSupport? {
        guard objects.properties(adapterPath, BlueZNames.adapter) != nil else { return nil }
        return AdvertisementMonitorSupport(
            manager: objects.properties(adapterPath, BlueZNames.advertisementMonitorManager))
    }

    private func receive(_ signal: DBusSignal) {
        if loading {
            buffered.append(signal)
            return
        }
        dispatch(signal)
    }

    private func dispatch(_ signal: DBusSignal) {
        defer { signalHandled(signal.sequence) }
        switch (signal.interface, signal.member) {
        case (BlueZNames.objectManager, "InterfacesAdded"):
            guard let path = signal.arguments.first?.asObjectPath, signal.arguments.count > 1 else { return }
            interfacesAdded(path, ManagedObjects.interfaces(signal.arguments[1]))
        case (BlueZNames.objectManager, "InterfacesRemoved"):
            guard let path = signal.arguments.first?.asObjectPath, signal.arguments.count > 1 else { return }
            interfacesRemoved(path, signal.arguments[1].asStrings ?? [])
        case (BlueZNames.properties, "PropertiesChanged"):
            guard signal.arguments.count > 1, let interface = signal.arguments[0].asString else { return }
            let changed = signal.arguments[1].asDictionary ?? [:]
            let invalidated = signal.arguments.count > 2 ? (signal.arguments[2].asStrings ?? []) : []
            propertiesChanged(signal.path, interface, changed, invalidated)
        case (BlueZNames.device, "Disconnected"):
            guard let reason = signal.arguments.first?.asString, let peripheral = peripherals[signal.path] else {
                return
            }
            update(peripheral) { $0.handle(.disconnectReasonReported(DisconnectReason(bluezReason: reason))) }
        default:
            break
        }
    }

    private func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: ManagedObjects.Properties]) {
        objects.add(path, interfaces)
        if path == adapterPath { monitorManagerChanged() }
        if path == PairingAgent.managerPath, interfaces[BlueZNames.agentManager] != nil {
            agentManagerAppeared()
        }
        if path == adapterPath, let adapter = interfaces[BlueZNames.adapter] {
            let powered = adapter["Powered"]?.asBool ?? false
            track(.adapterAdded(powered: powered))
            runDiscovery(arbiter.handle(.adapterAvailable(powered)))
            return
        }
        if let device = interfaces[BlueZNames.device] {
            guard isOurDevice(path) else { return }
            lastSeen[path] = options.clock.now
            if let peripheral = peripherals[path] { update(peripheral) { $0.deviceAdded(device) } }
            reportDiscovery(path, changed: Set(device.keys))
            return
        }
        if let owner = owningPeripheral(path) { update(owner) { $0.gattAdded(path, interfaces) } }
    }

    private func interfacesRemoved(_ path: DBusObjectPath, _ interfaces: [String]) {
        let removedDevice =
            interfaces.contains(BlueZNames.device) && isOurDevice(path)
            ? objects.properties(path, BlueZNames.device).flatMap(DeviceProperties.address) : nil
        objects.remove(path, interfaces)
        if path == adapterPath { monitorManagerChanged() }
        if path == adapterPath, interfaces.contains(BlueZNames.adapter) {
            for peripheral in peripherals.values { update(peripheral) { $0.adapterLost(.bluezRestarted) } }
            runDiscovery(arbiter.handle(.adapterAvailable(false)))
            track(.adapterRemoved)
            return
        }
        if interfaces.contains(BlueZNames.device) {
            if let removedDevice { removalBroadcaster.yield(removedDevice) }
            lastSeen[path] = nil
            for id in scanners.keys { scanners[id]?.reported[path] = nil }
            if let peripheral = peripherals[path] {
                update(peripheral) { $0.deviceRemoved() }
                peripherals[path] = nil
            }
            return
        }
        if let owner = owningPeripheral(path) { update(owner) { $0.gattRemoved(path, interfaces) } }
    }

    private func propertiesChanged(
        _ path: DBusObjectPath, _ interface: String, _ changed: [String: DBusValue], _ invalidated: [String]
    ) {
        objects.change(path, interface, changed, invalidated: invalidated)
        switch interface {
        case BlueZNames.adapter where path == adapterPath:
            if let powered = changed["Powered"]?.asBool {
                if !powered {
                    for peripheral in peripherals.values { update(peripheral) { $0.adapterLost(.adapterPoweredOff) } }
                }
                track(.poweredChanged(powered))
                runDiscovery(arbiter.handle(.adapterAvailable(powered)))
            }
            if let discovering = changed["Discovering"]?.asBool {
                runDiscovery(arbiter.handle(.discoveringChanged(discovering)))
            }
        case BlueZNames.device:
            if let peripheral = peripherals[path] {
                update(peripheral) { $0.deviceChanged(changed, invalidated: invalidated) }
            }
            if isOurDevice(path),
                !changed.keys.allSatisfy({ ["Connected", "ServicesResolved", "Paired", "Trusted"].contains($0) })
            {
                lastSeen[path] = options.clock.now
                reportDiscovery(path, changed: Set(changed.keys))
            }
        default:
            if let owner = owningPeripheral(path) { update(owner) { $0.gattChanged(path, interface, changed) } }
        }
    }

    /// Runs `body` on `peripheral`, which shares this manager's thread: a plain call, in bus order.
    private func update(_ peripheral: Peripheral, _ body: (isolated Peripheral) -> Void) {
        peripheral.assumeIsolated(body)
    }

    /// The peripheral whose device path is a prefix of `path` (a GATT object).
    private func owningPeripheral(_ path: DBusObjectPath) -> Peripheral? {
        let components = path.rawValue.split(separator: "/")
        guard components.count > 4 else { return nil }
        let devicePath = "/" + components.prefix(4).joined(separator: "/")
        return DBusObjectPath(validating: devicePath).flatMap { peripherals[$0] }
    }

    // MARK: Device cache

    /// Removes devices BlueZ caches that nobody needs (bleak#500). Runs every `cacheSweepInterval`.
    public func sweepDeviceCache() async {
        guard tracker.state == .poweredOn else { return }
        var entries: [DeviceCachePolicy.Entry] = []
        let now = options.clock.now
        for path in objects.paths(with: BlueZNames.device) where path.isDescendant(of: adapterPath) {
            guard let properties = objects.properties(path, BlueZNames.device),
                let address = DeviceProperties.address(properties)
            else { continue }
            var protected =
                (properties["Connected"]?.asBool ?? false) || (properties["Paired"]?.asBool ?? false)
                || (properties["Trusted"]?.asBool ?? false)
            if !protected, let peripheral = peripherals[path] { protected = await peripheral.isProtected }
            entries.append(
                DeviceCachePolicy.Entry(address: address, lastSeen: lastSeen[path] ?? now, isProtected: protected))
        }
        let policy = DeviceCachePolicy(
            timeToLive: options.deviceTimeToLive, maximumDevices: options.maximumCachedDevices)
        for address in policy.devicesToRemove(entries, now: now) {
            let path = devicePath(address)
            _ = try? await connection.call(
                destination: BlueZNames.service, path: adapterPath, interface: BlueZNames.adapter,
                method: "RemoveDevice", arguments: [.objectPath(path)], timeout: options.callTimeout)
        }
    }

    /// How many peripherals the manager tracks (one per device object BlueZ reported; to watch
    /// them stay bounded among passing addresses and across bluetoothd restarts).
    public var trackedPeripheralCount: Int { peripherals.count }

    /// How many devices BlueZ currently holds for the adapter (to watch the cache stay bounded).
    public var cachedDeviceCount: Int {
        objects.paths(with: BlueZNames.device).filter { $0.isDescendant(of: adapterPath) }.count
    }
}
