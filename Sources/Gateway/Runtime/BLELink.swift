import BlueZ
import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import JSON
import Logging
import TaskScope
import Timekeeping

/// The gateway's Bluetooth side: one discovery session, connections, subscriptions, reads,
/// writes, through the BlueZ central. It does not know the ``Gateway`` actor, which owns the state
/// and the pool's decisions: it reports ``Event``s to its ``Host`` and asks it the few answers it
/// needs (``Host``, `BLELink+Host.swift`).
///
/// Threads: the link is pinned to the D-Bus thread it is given (``BlueZBusThread``, kept for its
/// whole life); every bus connection it opens, one after each refusal or loss, runs on that
/// thread, and so do the central, its peripherals and its pairing agent: the link calls them, and
/// they report to it, with no hop. Nothing here may block or do work that grows with the radio's
/// traffic: each advertisement is handed to the ``AdvertisementIntake`` (on the pool), which
/// decodes it and gives back only the peripheral (``advertised(_:peripheral:persistence:)``).
actor BLELink {
    /// The D-Bus thread the link runs on (see the type's comment).
    nonisolated let thread: BlueZBusThread
    /// The thread that reads the devices' `AcquireNotify` sockets, and runs the pipeline for the
    /// values read there (the gateway's own, for its run: see `Gateway.notifyPoller`).
    nonisolated let notifyPoller: NotifySocketPoller
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.executor }
    /// Where the link's events go and its questions are answered (the gateway, which holds the link).
    let host: Host
    var configuration: BridgeConfiguration
    private let busAddress: String?
    let logger = Logger(label: "ble")
    let registry: DecoderRegistry
    var central: CentralManager?
    private var bus: BlueZBus?
    /// What is known about Bluetooth (reported to the gateway on every change).
    private(set) var health: BluetoothHealth
    /// The number of the last event reported (``report(_:)``).
    var eventNumber = 0
    /// Counts ``updateHealth(_:)``'s computations begun: one that a later one overtook is dropped.
    private var healthComputations = 0
    private var retry: BluetoothRetry<AnyBridgeClock>
    /// The gateway's clock (``GatewayOptions/clock``): sample times, last seen, the retry's backoff.
    let clock: any BridgeClock
    /// The task group the link's tasks belong to (the gateway's, which its stop closes).
    let scope: TaskScope
    private var retryTask: ScopedTask?
    /// While the system bus refuses access: the policy directories' changes bring the retry forward.
    private var policyWatch: PolicyDirectoryWatch?
    private var policyTask: ScopedTask?
    /// The tasks following the central's state and disconnections (ended with the central).
    private var centralTasks: [ScopedTask] = []
    /// The peripheral of each device, as the intake gave it (``advertised(_:peripheral:persistence:)``)
    /// or as restored. Letting go of one is recorded in ``releases``, so the intake gives it again.
    var peripherals: [String: Peripheral] = [:] {
        didSet { if peripherals.count < oldValue.count { releases.record() } }
    }
    /// Shared with the intake: see ``PeripheralReleases``.
    nonisolated let releases = PeripheralReleases()
    var gatt: [String: ResolvedGATT] = [:]
    /// Per device: the configured subscriptions' notification handlers (keyed by attribute id, since
    /// a characteristic UUID can appear in two services); they run the reading pipeline on the
    /// thread that received the value.
    var listeners: [String: [GATTAttributeID: HeldListener]] = [:]
    /// Per device: the listeners of raw-GATT notify requests (`bridge/request/gatt/notify`), held,
    /// let go and drained exactly as ``listeners`` (they hand their values to the pipeline on the
    /// thread that read them, too).
    var rawListeners: [String: [GATTAttributeID: HeldListener]] = [:]
    var expectedDisconnects: Set<String> = []
    /// Devices whose Device Information was read in this run.
    var described: Set<String> = []
    /// The connects in progress (connect, resolve, subscribe, report), awaited by ``stop(until:)``.
    var connectTasks: [Int: ScopedTask] = [:]
    var nextConnectTask = 0
    /// The devices a connect task is running for: one at a time per device (``connect(_:)``).
    var connecting: Set<String> = []
    var scanTask: ScopedTask?
    /// Passive mode: the task following the advertisement monitors' reports.
    private var monitorTask: ScopedTask?
    /// Passive mode: the monitors were activated once (renewed on a new central).
    private var passiveRunning = false
    /// `scan.mode` `"passive"`: bluetoothd's version, asked as soon as the bus is open, so that the
    /// probe (a process started on a slow machine) runs while the central starts.
    private var versionProbe: ScopedValue<Result<BluetoothdVersionProbe.Found, BluetoothdVersionError>>?
    var discoveryPaused = false
    var stopped = false
    var powered = false
    /// Known peripherals were restored for the current central and power cycle (``start()`` and
    /// the first powered state both ask; once is enough).
    var restored = false
    /// What each advertisement is and decodes to, off the link's thread.
    nonisolated let intake: AdvertisementIntake
    /// Per device: the stale-GATT-cache recovery (``GATTCacheRecovery``), reset by a connection that
    /// finds every configured attribute.
    var cacheRecovery: [String: GATTCacheRecovery] = [:]
    /// Devices being disconnected and connected again inside their connect task (that recovery's
    /// reconnect): their link drop is not a disconnection for the pool.
    var reconnectingInPlace: Set<String> = []
    /// Per device forgotten by that recovery: given each peripheral discovery reports for it (the removed one
    /// too, until bluetoothd has removed its object).
    var rediscoveryWaiters: [String: AsyncStream<Peripheral>.Continuation] = [:]
    let pipeline: ReadingPipeline

    init(
        host: Host, configuration: BridgeConfiguration, busAddress: String?, pipeline: ReadingPipeline,
        clock: any BridgeClock, thread: BlueZBusThread, notifyPoller: NotifySocketPoller = .shared,
        decoders: DecoderRegistry = .standard, scope: TaskScope = TaskScope()
    ) {
        self.scope = scope
        self.thread = thread
        self.notifyPoller = notifyPoller
        self.host = host
        self.clock = clock
        registry = decoders
        intake = AdvertisementIntake(
            host: host, configuration: configuration, pipeline: pipeline, clock: clock, registry: decoders,
            releases: releases)
        self.retry = BluetoothRetry(clock: AnyBridgeClock(clock))
        self.configuration = configuration
        self.pipeline = pipeline
        self.busAddress = busAddress
        self.health = BluetoothHealth(adapter: configuration.bluetooth.adapter, user: ProcessInfo.processInfo.userName)
    }
}

extension BLELink {
    // MARK: Start and stop

    /// Opens the bus and the BlueZ central. When the bus cannot be reached or refuses access, the
    /// gateway says so (health, Home Assistant, systemd status, the log) and tries again on
    /// ``BluetoothRetry``'s schedule; a missing bluetoothd or adapter is followed through BlueZ's
    /// own signals instead.
    func start() async {
        retryTask = nil
        guard !stopped else { return }
        let bus: BlueZBus
        do {
            bus = try await openBus()
        } catch {
            await unavailable(.busUnavailable, error: error)
            return
        }
        if configuration.bluetooth.scan.mode == .passive {
            versionProbe = scope.spawnValue { await bus.bluetoothdVersion() }
        }
        do {
            var options = CentralManager.Options(
                adapter: configuration.bluetooth.adapter, deviceTimeToLive: configuration.bluetooth.scan.deviceTTL,
                connection: connectionLifecycle, pairing: pairingPolicy(), clock: clock)
            options.notifyPoller = notifyPoller
            let central = try await CentralManager(bus: bus, options: options)
            self.central = central
            self.bus = bus
            await registerPairingAgent(central)
            let states = central.stateUpdates
            keepCentralTask { [weak self] in
                for await state in states { await self?.managerState(state) }
            }
            // Passive mode: a bluetoothd restarted without -E has no monitor manager (health says so).
            let monitorManager = central.monitorManagerUpdates
            keepCentralTask { [weak self] in
                for await _ in monitorManager { await self?.monitorManagerChanged() }
            }
            // bluetoothd owns its name but does not answer (health says so until a retry answers).
            let loadFailures = central.loadFailures
            keepCentralTask { [weak self] in
                for await _ in loadFailures { await self?.loadFailed() }
            }
            let disconnections = central.disconnections
            keepCentralTask { [weak self] in
                for await event in disconnections { await self?.disconnected(event) }
            }
            // Shared-broker mode: a device object BlueZ removed is a device no longer heard.
            let removals = central.deviceRemovals
            keepCentralTask { [weak self] in
                for await address in removals { await self?.deviceObjectRemoved(address) }
            }
            // Before start returns: the gateway reads commands next, and a command the broker
            // queued while it was down must find its device.
            await restoreKnownPeripherals()
            // A central opened again (the bus came back) registers the monitors again.
            if passiveRunning, let problem = await startPassiveScan() {
                logger.error("cannot scan passively", [("code", problem.code.rawValue), ("error", problem.detail)])
            }
        } catch {
            bus.close()
            await unavailable(BluetoothHealth.problem(for: error), error: error)
        }
    }

    /// `scan.mode` `"passive"`: registers the advertisement monitors (``PassivePatternPlan``) and
    /// follows what they find; nil once bluetoothd activated them (and in active mode), otherwise
    /// why passive scanning cannot be done, for the refusal at start.
    func startPassiveScan() async -> PassiveScanUnavailable? {
        guard configuration.bluetooth.scan.mode == .passive else { return nil }
        let adapter = configuration.bluetooth.adapter
        guard let central, let support = await central.advertisementMonitorSupport() else {
            return PassiveScanUnavailable(
                code: .adapterUnavailable,
                detail: "adapter \(adapter) is not available to ask for advertisement monitor support"
                    + (health.lastError.map { " (\($0))" } ?? ""))
        }
        if let missing = support.missing {
            return PassiveScanUnavailable(code: .monitorUnsupported, detail: "\(adapter): \(missing)")
        }
        let afterUUIDWarning: String?
        switch PassiveScanVersionPolicy.verdict(version: await bluetoothdVersion()) {
        case .refuse(let problem): return problem
        case .proceed(let warning): afterUUIDWarning = warning
        }
        let plan = PassivePatternPlan(configuration: configuration, decoders: DecoderRegistry.builtInAdvertisements)
        for item in plan.uncovered {
            logger.warning("not seen in passive scanning", [("what", item)])
        }
        if let afterUUIDWarning {
            for item in plan.notSeenSince571 { logger.warning(afterUUIDWarning, [("what", item)]) }
        }
        guard !plan.sets.isEmpty else {
            return PassiveScanUnavailable(
                code: .noPatterns,
                detail: "no configured device (and no auto_devices decoder) advertises data an or-pattern can match")
        }
        let scan = configuration.bluetooth.scan
        let discoveries: AsyncStream<Discovery>
        do {
            discoveries = try await central.startMonitoring(
                plan.monitorPatterns, allowDuplicates: scan.duplicates, rssiThreshold: scan.rssiMin)
        } catch {
            return PassiveScanUnavailable(code: .monitorRejected, detail: "\(adapter): \(error)")
        }
        logger.info(
            "scanning passively through advertisement monitors",
            [("monitors", "\(plan.sets.count)"), ("for", plan.sets.map(\.purpose).joined(separator: ", "))])
        let services = Set(scan.services)
        passiveRunning = true
        monitorTask?.cancel()
        let intake = self.intake
        let attach = attachment()
        monitorTask = scope.spawnCancellable { await intake.follow(discoveries, advertising: services, attach: attach) }
        return nil
    }

    /// bluetoothd's version (``BluetoothdVersionProbe``), logged with how it was found; nil when
    /// it cannot be told.
    private func bluetoothdVersion() async -> BluetoothdVersion? {
        let result: Result<BluetoothdVersionProbe.Found, BluetoothdVersionError>
        if let versionProbe {
            // nil: the probe was cancelled, so the link is stopping.
            guard let probed = await versionProbe.value else { return nil }
            result = probed
        } else if let bus {
            result = await bus.bluetoothdVersion()
        } else {
            return nil
        }
        switch result {
        case .success(let found):
            logger.info("bluetoothd version", [("version", "\(found.version)"), ("from", found.description)])
            return found.version
        case .failure(let error):
            logger.info(
                "bluetoothd version unknown", [("code", error.code.rawValue), ("error", error.detail)])
            return nil
        }
    }

    /// A new connection, on the link's thread.
    private func openBus() async throws -> BlueZBus {
        if let busAddress { return try await BlueZBus(.address(busAddress), on: thread) }
        switch configuration.bluetooth.bus {
        case .system: return try await BlueZBus(.system, on: thread)
        case .session: return try await BlueZBus(.session, on: thread)
        case .address(let address): return try await BlueZBus(.address(address), on: thread)
        }
    }

    /// Bluetooth cannot be reached: report it and try again when ``BluetoothRetry`` says.
    private func unavailable(_ problem: BluetoothHealth.Problem, error: any Error) async {
        let due = retry.failed()
        healthComputations += 1
        await report(
            health: BluetoothHealth(
                adapter: configuration.bluetooth.adapter, lastError: "\(error)", problem: problem, user: health.user))
        logger.debug("Bluetooth retry scheduled", [("attempt", "\(retry.failures)"), ("error", "\(error)")])
        scheduleRetry(at: due)
        if problem == .accessDenied { watchPolicy() }
    }

    private func scheduleRetry(at due: ContinuousClock.Instant) {
        retryTask?.cancel()
        // BluetoothRetry's backoff before the next attempt to open the bus.
        retryTask = scope.spawnTimer(at: due, clock: clock) { [weak self] in await self?.start() }
    }

    /// Refused by the system bus: follow its policy directories, so a fix is tried about a second
    /// after it is saved rather than at the next scheduled retry (up to 8 s later).
    private func watchPolicy() {
        guard policyWatch == nil, busAddress == nil, case .system = configuration.bluetooth.bus,
            let watch = PolicyDirectoryWatch(directories: PolicyDirectoryWatch.systemBusDirectories)
        else { return }
        policyWatch = watch
        let changes = watch.changes
        policyTask = scope.spawnCancellable { [weak self] in
            for await _ in changes { await self?.policyChanged() }
        }
    }

    private func policyChanged() {
        guard health.problem == .accessDenied, retryTask != nil, let due = retry.changed() else { return }
        logger.info("D-Bus policy changed; trying Bluetooth again", [("in", "\(due - clock.now)")])
        scheduleRetry(at: due)
    }

    private func stopWatchingPolicy() {
        policyTask?.cancel()
        policyTask = nil
        policyWatch?.cancel()
        policyWatch = nil
    }

    /// Starts `work` in the link's scope as one of ``centralTasks`` (cancelled with the central).
    private func keepCentralTask(_ work: @escaping @Sendable () async -> Void) {
        if let task = scope.spawnCancellable(work) { centralTasks.append(task) }
    }

    /// Drops the central and its bus connection (access was refused: a new connection is needed to
    /// try again, since the policy applies per connection).
    private func dropCentral() async {
        for task in centralTasks { task.cancel() }
        centralTasks.removeAll()
        if let central { await central.close() }
        central = nil
        restored = false
        bus?.close()
        bus = nil
    }

    /// Disconnects every peripheral, connected or with a connect in progress, and returns once
    /// BlueZ reports each link down (or at `deadline`). Leaving a connect in flight let BlueZ
    /// complete it after the process had gone (a restart re-execs at once): the device stayed
    /// connected to nobody, stopped advertising, and the restarted gateway never saw it again.
    func stop(until deadline: ContinuousClock.Instant) async {
        stopped = true
        retryTask?.cancel()
        stopWatchingPolicy()
        for task in centralTasks { task.cancel() }
        scanTask?.cancel()
        monitorTask?.cancel()
        guard let central else { return }
        let ids = Array(peripherals.keys)
        // The listeners are let go, not cancelled: the disconnects below end them after their
        // notify sockets were read to the end, so the values the devices sent until the link went
        // down still reach the pipeline (it stops accepting only after this returns). Cancelling
        // first dropped what the sockets held, and every value of the disconnect's round trip.
        let draining = ids.flatMap { forgetSubscriptions($0) }
        expectedDisconnects.formUnion(ids)
        for task in connectTasks.values { task.cancel() }
        let targets = ids.compactMap { peripherals[$0] }
        let pending = Array(connectTasks.values)
        await Deadline.run(until: deadline) {
            // Each connect task ends in its catch (its operations fail as the link drops) and cancels
            // its own attempt; the disconnects after it settle whatever that attempt left behind.
            await withTaskGroup(of: Void.self) { group in
                for peripheral in targets { group.addTask { await central.cancelConnection(peripheral) } }
            }
            for task in pending { await task.finished() }
            await withTaskGroup(of: Void.self) { group in
                for peripheral in targets { group.addTask { await central.disconnect(peripheral) } }
            }
            for held in draining {
                for await _ in held.ended {}
            }
        }
        // A listener whose link did not end by the deadline stops here.
        for held in draining { held.listener.cancel() }
        // Then the central goes with its tasks (its cache sweep, its signal handlers) and the bus
        // connection: nothing of the link outlives the gateway's stop.
        await dropCentral()
    }

    /// A reloaded configuration; a peripheral stays attached to its device while the device's
    /// match still accepts it. A reload that gives a device its first `passkey` registers the
    /// pairing agent then (it was registered only at start before, so the passkey stayed unused
    /// until a restart).
    func update(configuration: BridgeConfiguration) async {
        let hadPasskey = self.configuration.devices.contains { $0.passkey != nil }
        self.configuration = configuration
        await intake.update(configuration: configuration)
        for (id, peripheral) in peripherals {
            guard let device = configuration.device(id: id),
                device.match.matches(address: peripheral.identifier, name: nil, services: [])
                    || device.match.address == nil
            else {
                peripherals[id] = nil
                continue
            }
        }
        if !hadPasskey, let central { await registerPairingAgent(central) }
    }

    func scanFailed(_ error: any Error) {
        logger.warning("discovery could not start; retried when the adapter is back", [("error", "\(error)")])
        scanTask = nil
    }

    private func managerState(_ state: ManagerState) async {
        if state == .unauthorized {
            // dbus-daemon's own text says which uid it refused and what call: keep it for the log.
            let refusal: any Error =
                await central?.accessDeniedError
                ?? BluetoothError(.unauthorized, "D-Bus denied access to org.bluez")
            await dropCentral()
            await applyPowered(false)
            await unavailable(.accessDenied, error: refusal)
            return
        }
        await updateHealth(state)
        if state == .poweredOn || state == .poweredOff {
            retry.succeeded()
            stopWatchingPolicy()
        }
        await applyPowered(state == .poweredOn)
    }

    /// The health as the central's `state` and BlueZ's name owner say.
    private func updateHealth(_ state: ManagerState) async {
        healthComputations += 1
        let computation = healthComputations
        var owner: String?
        if let bus { owner = await bus.bluezOwner() }
        var updated = health
        updated.bluezOwner = owner
        updated.adapterPresent = state == .poweredOn || state == .poweredOff
        updated.powered = state == .poweredOn
        updated.problem = BluetoothHealth.problem(for: state, bluezRunning: owner != nil)
        // Not loaded because bluetoothd did not answer: said as such, not as `starting` for good
        // (or, after a restart, as `adapter_missing`).
        if state == .unknown || state == .resetting, owner != nil, let failure = await central?.loadFailure {
            updated.problem = .bluezNotResponding
            updated.lastError = failure
        }
        // Once passive scanning ran, a manager that went away (bluetoothd restarted without -E)
        // stops every reading: said in health rather than by exiting, and cleared when it is back.
        if updated.problem == nil, passiveRunning, await central?.advertisementMonitorSupport()?.missing != nil {
            updated.problem = .monitorUnsupported
        }
        // The state stream's task and the monitor manager's both compute here, and each awaits
        // above: a computation begun later (from a later state) may have finished meanwhile.
        guard computation == healthComputations, updated != health else { return }
        await report(health: updated)
    }

    /// Makes `updated` the link's health and reports it (``report(_:)``: the gateway kept an older
    /// health when one task's report overtook another's).
    private func report(health updated: BluetoothHealth) async {
        health = updated
        await report(.health(updated))
    }

    private func loadFailed() async {
        guard let central else { return }
        await updateHealth(await central.state)
    }

    private func monitorManagerChanged() async {
        guard passiveRunning, let central else { return }
        await updateHealth(await central.state)
    }

    private func applyPowered(_ isOn: Bool) async {
        guard isOn != powered else { return }
        powered = isOn
        if isOn {
            startScan()
            await restoreKnownPeripherals()
        } else {
            scanTask?.cancel()
            scanTask = nil
            // The links are down: the central ended every peripheral's notifications before it said
            // so, each once its notify socket is read to the end, on the notify thread. Cancelling
            // the listeners here (often before that read, when the notify thread is behind the bus)
            // dropped the values the devices sent just before the power-off (issue 19: 1–2 values of
            // each of 20 devices in a soak), so they are only let go of, as on a link drop; the raw
            // `gatt/notify` listeners as well (their tasks were cancelled here, issue 19 again).
            for id in Set(rawListeners.keys).union(listeners.keys) { forgetSubscriptions(id) }
            peripherals.removeAll()
            restored = false
        }
        await report(.adapterPowered(isOn))
    }
}
