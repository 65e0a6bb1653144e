import Bluetooth
import DBus
import Foundation
import Logging
import TaskScope
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
    static let logger = Logger(label: "central")

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
        /// The thread that reads the peripherals' `AcquireNotify` sockets: the process's
        /// (``NotifySocketPoller/shared``) unless the owner runs one of its own (the gateway does,
        /// for its run, and shuts it down when it stops).
        package var notifyPoller: NotifySocketPoller = .shared

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
    nonisolated let removalBroadcaster = Broadcaster<BluetoothAddress>(replaysLatest: false)
    nonisolated let loadFailureBroadcaster = Broadcaster<String>(replaysLatest: false)

    var tracker = AdapterStateTracker()
    var arbiter = DiscoveryArbiter<Int>()
    var scanners: [Int: Scanner] = [:]
    var nextScannerID = 0
    /// BlueZ's objects, the one copy this manager and its peripherals read; changed only here, as
    /// bluetoothd's signals and replies are handled.
    nonisolated let tree: BlueZObjectTree
    /// The tree as it is now (a copy sharing its storage: change it through `tree.update`).
    var objects: ManagedObjects { tree.read { $0 } }
    /// The advertisement monitors of a listen-only scan (``startMonitoring(_:allowDuplicates:rssiThreshold:timeout:)``).
    var monitoring: MonitorSession?
    var lastSeen: [DBusObjectPath: ContinuousClock.Instant] = [:]
    var peripherals: [DBusObjectPath: Peripheral] = [:]
    var loading = true
    var buffered: [DBusSignal] = []
    /// The `GetManagedObjects` under way (`loading`), which `init` waits for.
    private var loadTask: ScopedTask?
    /// The number of the latest load: a load's outcome counts only while it is still the latest
    /// (bluetoothd went away, or a newer load began, meanwhile).
    private var loadNumber = 0
    /// The wait before a failed load is tried again (``AdapterStateTracker/Action/reloadObjects(after:)``).
    private var reloadTimer: ScopedTask?
    /// Every task of the manager and of its peripherals (the cache sweep, BlueZ calls awaiting
    /// their replies, timers), ended by ``close()``.
    nonisolated let scope = TaskScope()
    /// bluetoothd's signals and its name's owner changes, handled on the connection's thread.
    private var signalHandlers: [DBusSignalHandler] = []
    /// One `GetManagedObjects` shared by the connects that end at about the same time (`CentralManager+Snapshot`).
    var snapshots = SnapshotCoalescer()
    var snapshotWaiters: [UInt64: [CheckedContinuation<SnapshotWake, Never>]] = [:]
    /// Connects waiting for the discovery call in flight to be answered (``waitForDiscoveryCalls()``).
    var discoveryCallWaiters: [CheckedContinuation<Void, Never>] = []
    var closed = false
    /// The ``DBusSignal/sequence`` of the last bluetoothd signal handled, and the method calls
    /// (`DeviceFound`) waiting for one (``waitForSignals(through:)``).
    var signalsHandled: UInt64 = 0
    var signalWaiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    /// The bus's refusal behind an `unauthorized` state (dbus-daemon's text names the user's uid and
    /// the call it rejected), kept for the log; nil until access was denied.
    public private(set) var accessDeniedError: DBusError?
    /// Why bluetoothd's objects are not loaded although it owns `org.bluez`: the error of the last
    /// `GetManagedObjects` (not answered within `callTimeout`, or failed), while the manager waits to
    /// ask again (``loadFailures``). nil once a load answered or `org.bluez` changed owner.
    public private(set) var loadFailure: String?

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
        self.agent = PairingAgent(
            connection: connection, path: options.agentPath, policy: options.pairing, scope: scope)
        self.tree = BlueZObjectTree(connection: connection)
        self.adapterPath = DBusObjectPath(validating: BlueZPaths.adapter(options.adapter)) ?? "/org/bluez/hci0"
        // The rest runs in an isolated method, not here: an `async` actor initializer built by Swift
        // 6.0 (Debian 13's swiftlang 6.0.3) resumes after an `await` off the actor's custom executor
        // (this one's is the D-Bus thread), so the set-up below ran beside the signal handlers on the
        // D-Bus thread, and a start without bluetoothd crashed in `agent.assumeIsolated` (the VM
        // tier's `scenario-bluez-late` on Debian 13). A method hops to the actor's executor itself.
        try await start()
    }

    /// The initializer's set-up, on the D-Bus thread (see ``init(connection:options:)``).
    private func start() async throws {
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
        await loadTask?.finished()
        let sweepInterval = options.cacheSweepInterval
        let clock = options.clock
        scope.spawn { [weak self] in
            while true {
                // Real delay: the period of the sweep that forgets devices unseen for `deviceTimeToLive`.
                do { try await clock.sleep(for: sweepInterval) } catch { return }
                guard let self else { return }
                await self.sweepDeviceCache()
            }
        }
    }

    /// A manager on the bus at `busAddress` (`unix:path=…`), or on the system bus (honouring
    /// `DBUS_SYSTEM_BUS_ADDRESS`) when nil.
    public static func connect(busAddress: String? = nil, options: Options = Options()) async throws -> CentralManager {
        let bus = try await BlueZBus(busAddress.map { .address($0) } ?? .system)
        return try await CentralManager(bus: bus, options: options)
    }

    /// Stops everything: the pairing agent is unregistered, scanners end, connections are left to BlueZ, streams
    /// finish. Returns once every task of the manager and its peripherals has ended (calls awaiting
    /// BlueZ are abandoned: a pending connect fails with `operationCancelled`), or after 2 s of the
    /// manager's clock for one that ignores its cancellation.
    public func close() async {
        await stopMonitoring()
        await agent.unregister()
        closed = true
        resumeDiscoveryCallWaiters()
        signalHandled(.max)
        for handler in signalHandlers { handler.cancel() }
        signalHandlers.removeAll()
        // No signal ends an attempt or a link from here on: each peripheral ends its own.
        for peripheral in peripherals.values { update(peripheral) { $0.managerClosed() } }
        for scanner in scanners.values { scanner.continuation.finish() }
        scanners.removeAll()
        stateBroadcaster.finish()
        disconnectBroadcaster.finish()
        monitorManagerBroadcaster.finish()
        removalBroadcaster.finish()
        loadFailureBroadcaster.finish()
        await scope.close(until: options.clock.now + .seconds(2), clock: options.clock)
    }

    /// Whether ``close()`` has returned with every task of the manager and its peripherals ended.
    package nonisolated var allTasksEnded: Bool { scope.isClosed }

    // MARK: State

    /// The current state (`CBManagerState`).
    public var state: ManagerState { tracker.state }

    /// State changes, starting with the current state.
    public nonisolated var stateUpdates: AsyncStream<ManagerState> { stateBroadcaster.subscribe() }

    /// Whether the adapter shows `AdvertisementMonitorManager1`, each time BlueZ's objects may have
    /// changed that (loaded, an adapter interface added or removed, bluetoothd gone); repeats are possible.
    public nonisolated var monitorManagerUpdates: AsyncStream<Bool> { monitorManagerBroadcaster.subscribe() }

    /// Each failed load of bluetoothd's objects while it owns `org.bluez` (``loadFailure``), as it
    /// happens; the state stays `unknown` (or `resetting`) meanwhile, and the load is tried again
    /// after 1, 2, 4, 8, then every 15 s (``RetrySchedule``).
    public nonisolated var loadFailures: AsyncStream<String> { loadFailureBroadcaster.subscribe() }

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

    func requirePoweredOn() throws(BluetoothError) {
        try requireOpen()
        if let error = tracker.state.operationError { throw error }
    }

    /// After ``close()`` nothing more starts (its tasks would have no scope to run in).
    func requireOpen() throws(BluetoothError) {
        if closed || !scope.isOpen { throw BluetoothError(.operationCancelled, "the central manager is closed") }
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
        adapterDevicePaths.sorted().compactMap { path in
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
        await waitForDiscoveryCalls()
        try requirePoweredOn()
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
    /// So the peripheral's objects are replaced by those bluetoothd reports now. When they are exactly
    /// `exportedBefore` (non-empty), bluetoothd's cached copy stood and nothing was discovered
    /// (``Peripheral/gattCacheReused``).
    private func resynchroniseGATT(
        of peripheral: Peripheral, exportedBefore: [DBusObjectPath: Set<String>]
    ) async {
        guard let all = await managedObjectsSnapshot() else {
            await peripheral.gattReloaded(objectCount: nil, cacheReused: false)
            return
        }
        let gatt = all.filter { $0.key.isDescendant(of: peripheral.path, orEqual: false) }
            .mapValues(ManagedObjects.interfaces)
        tree.update { $0.replaceDescendants(of: peripheral.path, with: gatt) }
        let reused = !exportedBefore.isEmpty && gatt.mapValues { Set($0.keys) } == exportedBefore
        await peripheral.gattReloaded(objectCount: gatt.count, cacheReused: reused)
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

    func devicePath(_ address: BluetoothAddress) -> DBusObjectPath {
        DBusObjectPath(validating: BlueZPaths.device(address, adapter: options.adapter)) ?? adapterPath
    }

    func peripheral(for path: DBusObjectPath, address: BluetoothAddress) -> Peripheral {
        if let existing = peripherals[path] { return existing }
        let broadcaster = disconnectBroadcaster
        var pairing: (@Sendable (Peripheral, BluetoothError) async throws -> Void)?
        if options.pairOnInsufficientAuthentication {
            pairing = { [weak self] peripheral, error in
                try await self?.pairForAuthentication(peripheral, error: error)
            }
        }
        let peripheral = Peripheral(
            identifier: address, path: path, connection: connection, tree: tree, scope: scope,
            notifyPoller: options.notifyPoller, lifecycle: options.connection,
            callTimeout: options.callTimeout, clock: options.clock, onDisconnect: { broadcaster.yield($0) },
            authenticationHandler: pairing)
        peripherals[path] = peripheral
        let device = objects.properties(path, BlueZNames.device) ?? [:]
        update(peripheral) { $0.deviceAdded(device) }
        return peripheral
    }

    // MARK: BlueZ presence and objects

    private func bluezOwnerChanged(present: Bool) {
        if !present {
            // A load under way or waiting to be retried is void: the next owner gets a load of its own.
            loadNumber += 1
            loadFailure = nil
            reloadTimer?.cancel()
            reloadTimer = nil
            loading = false
            dropBuffered()
            agent.assumeIsolated { $0.bluezVanished() }
            tree.update { $0.removeAll() }
            lastSeen.removeAll()
            monitorManagerChanged()
            for peripheral in peripherals.values { update(peripheral) { $0.adapterLost(.bluezRestarted) } }
            runDiscovery(arbiter.handle(.adapterAvailable(false)))
        }
        track(.bluezPresent(present))
    }

    /// bluetoothd (re)exported `AgentManager1`: the agent registers again, in a task (it awaits BlueZ).
    func agentManagerAppeared() {
        let agent = self.agent
        scope.spawn { await agent.agentManagerAppeared() }
    }

    private func perform(_ action: AdapterStateTracker.Action) {
        switch action {
        case .stateChanged(let state): stateBroadcaster.yield(state)
        case .loadObjects:
            // From here until the reply is applied, signals wait in `buffered` (replayed in order).
            // Any buffered before are older than the reply, which covers them.
            reloadTimer?.cancel()
            reloadTimer = nil
            loading = true
            dropBuffered()
            loadNumber += 1
            let number = loadNumber
            loadTask = scope.spawnCancellable { await self.loadObjects(number) }
        case .reloadObjects(let delay):
            // Until then the signals wait in `buffered`; the next load's reply covers them.
            let number = loadNumber
            reloadTimer = scope.spawnTimer(at: options.clock.now + delay, clock: options.clock) { [weak self] in
                await self?.reloadIfStillDue(number)
            }
        }
    }

    private func reloadIfStillDue(_ number: Int) {
        guard number == loadNumber, !closed else { return }
        perform(.loadObjects)
    }

    /// Forgets the buffered signals (a newer `GetManagedObjects` covers them), marking them handled
    /// for ``waitForSignals(through:)``.
    private func dropBuffered() {
        guard let last = buffered.last else { return }
        buffered.removeAll()
        signalHandled(last.sequence)
    }

    func track(_ event: AdapterStateTracker.Event) {
        for action in tracker.handle(event) { perform(action) }
    }

    private func loadObjects(_ number: Int) async {
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                destination: BlueZNames.service, path: .root, interface: BlueZNames.objectManager,
                method: "GetManagedObjects", timeout: options.callTimeout)
        } catch let error as DBusError where error.name == .accessDenied {
            guard number == loadNumber, !closed else { return }
            loading = false
            dropBuffered()
            accessDeniedError = error
            track(.accessDenied)
            return
        } catch {
            guard number == loadNumber, !closed else { return }
            let owner: String??
            do { owner = .some(try await connection.nameOwner(BlueZNames.service)) } catch { owner = .none }
            guard number == loadNumber, !closed else { return }
            if case .some(nil) = owner {
                // bluetoothd is gone: its NameOwnerChanged ends this load (and starts the next one).
                loading = false
                dropBuffered()
                track(.bluezPresent(false))
                return
            }
            // bluetoothd still owns its name but did not answer (or the bus could not say who owns
            // it): try again later; the signals meanwhile wait in `buffered` for the next reply.
            let actions = tracker.handle(.loadFailed)
            if case .reloadObjects(let delay) = actions.first {
                Self.logger.warning(
                    "bluetoothd did not answer GetManagedObjects; trying again",
                    [("error", "\(error)"), ("retry_in", "\(delay)")])
                loadFailure = "\(error)"
                loadFailureBroadcaster.yield("\(error)")
            }
            for action in actions { perform(action) }
            return
        }
        guard number == loadNumber, !closed else { return }
        loadFailure = nil
        let previous = objects
        tree.update { $0 = ManagedObjects(reply: reply.first ?? .array(elementSignature: "y", [])) }
        let now = options.clock.now
        for path in adapterDevicePaths {
            lastSeen[path] = now
        }
        for (path, peripheral) in peripherals {
            guard let device = objects.properties(path, BlueZNames.device) else {
                // bluetoothd came back without this device (a restarted one exports only those it
                // stored: connected or paired before); it sent no InterfacesRemoved for it, so it is
                // forgotten here as that signal would: else every address present at a restart (a
                // crowd of passing phones) would stay in these tables for good.
                let lastKnown = previous.properties(path, BlueZNames.device) ?? [:]
                update(peripheral) { $0.deviceRemoved(lastKnown: lastKnown) }
                peripherals[path] = nil
                continue
            }
            update(peripheral) { peripheral in
                peripheral.deviceAdded(device)
                peripheral.gattAdded()
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
        runDiscovery(arbiter.handle(.discoveringChanged(adapter?["Discovering"]?.asBool ?? false)))
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

}
