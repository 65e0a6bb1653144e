import BlueZ
import Bluetooth
import ByteLayouts
import Configuration
import Decoders
import Foundation
import JSON
import Logging
import ProcessMemory
import Timekeeping

/// The gateway's Bluetooth side: one discovery session, connections, subscriptions, reads,
/// writes, through the BlueZ central. Reports to the ``Gateway`` actor, which owns the state
/// and the pool's decisions.
actor BLELink {
    private weak var gateway: Gateway?
    var configuration: BridgeConfiguration
    private let busAddress: String?
    let logger = Logger(label: "ble")
    private let registry = DecoderRegistry.standard
    private var central: CentralManager?
    private var bus: BlueZBus?
    /// What is known about Bluetooth (reported to the gateway on every change).
    private var health: BluetoothHealth
    private var retry: BluetoothRetry<AnyBridgeClock>
    /// The gateway's clock (``GatewayOptions/clock``): sample times, last seen, the retry's backoff.
    let clock: any BridgeClock
    private var retryTask: Task<Void, Never>?
    /// While the system bus refuses access: the policy directories' changes bring the retry forward.
    private var policyWatch: PolicyDirectoryWatch?
    private var policyTask: Task<Void, Never>?
    /// The tasks following the central's state and disconnections (ended with the central).
    private var centralTasks: [Task<Void, Never>] = []
    var peripherals: [String: Peripheral] = [:]
    private var gatt: [String: ResolvedGATT] = [:]
    /// Per device: the configured subscriptions' notification handlers (keyed by attribute id, since
    /// a characteristic UUID can appear in two services); they run the reading pipeline on the
    /// thread that received the value.
    private var listeners: [String: [GATTAttributeID: HeldListener]] = [:]
    /// Per device: one task per raw-GATT notify request (`bridge/request/gatt/notify`).
    private var notifyTasks: [String: [GATTAttributeID: Task<Void, Never>]] = [:]
    private var expectedDisconnects: Set<String> = []
    /// Devices whose Device Information was read in this run.
    private var described: Set<String> = []
    /// The connects in progress (connect, resolve, subscribe, report), awaited by ``stop(until:)``.
    private var connectTasks: [Int: Task<Void, Never>] = [:]
    private var nextConnectTask = 0
    private var scanTask: Task<Void, Never>?
    /// Passive mode: the task following the advertisement monitors' reports.
    private var monitorTask: Task<Void, Never>?
    /// Passive mode: the monitors were activated once (renewed on a new central).
    private var passiveRunning = false
    /// `scan.mode` `"passive"`: bluetoothd's version, asked as soon as the bus is open, so that the
    /// probe (a process started on a slow machine) runs while the central starts.
    private var versionProbe: Task<Result<BluetoothdVersionProbe.Found, BluetoothdVersionError>, Never>?
    var discoveryPaused = false
    private var stopped = false
    private var powered = false
    /// Known peripherals were restored for the current central and power cycle (``start()`` and
    /// the first powered state both ask; once is enough).
    private var restored = false
    /// Recently seen advertisers (for `bridge/request/scan`), bounded by count and age.
    private var seen = SeenAdvertisers()
    /// Fixed addresses caught by a match without an address → the id the gateway assigned
    /// (``MatchInstances``); cleared on reload.
    private var assigned: [String: String] = [:]
    /// Per device: the BTHome packet filter of `deduplicate`.
    private var packetFilters: [String: BTHomePacketFilter] = [:]
    /// Per device: the stale-GATT-cache recovery (``GATTCacheRecovery``), reset by a connection that
    /// finds every configured attribute.
    var cacheRecovery: [String: GATTCacheRecovery] = [:]
    /// Devices being disconnected and connected again inside their connect task (that recovery's
    /// reconnect): their link drop is not a disconnection for the pool.
    var reconnectingInPlace: Set<String> = []
    /// Per device forgotten by that recovery: given each peripheral discovery reports for it (the removed one
    /// too, until bluetoothd has removed its object).
    var rediscoveryWaiters: [String: AsyncStream<Peripheral>.Continuation] = [:]
    private let pipeline: ReadingPipeline

    init(
        gateway: Gateway, configuration: BridgeConfiguration, busAddress: String?, pipeline: ReadingPipeline,
        clock: any BridgeClock
    ) {
        self.gateway = gateway
        self.clock = clock
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
            versionProbe = Task { await bus.bluetoothdVersion() }
        }
        do {
            let central = try await CentralManager(
                bus: bus,
                options: CentralManager.Options(
                    adapter: configuration.bluetooth.adapter, deviceTimeToLive: configuration.bluetooth.scan.deviceTTL,
                    connection: connectionLifecycle, pairing: pairingPolicy(), clock: clock))
            self.central = central
            self.bus = bus
            await registerPairingAgent(central)
            let states = central.stateUpdates
            centralTasks.append(
                Task { [weak self] in
                    for await state in states { await self?.managerState(state) }
                })
            // Passive mode: a bluetoothd restarted without -E has no monitor manager (health says so).
            let monitorManager = central.monitorManagerUpdates
            centralTasks.append(
                Task { [weak self] in
                    for await _ in monitorManager { await self?.monitorManagerChanged() }
                })
            let disconnections = central.disconnections
            centralTasks.append(
                Task { [weak self] in
                    for await event in disconnections { await self?.disconnected(event) }
                })
            // Shared-broker mode: a device object BlueZ removed is a device no longer heard.
            let removals = central.deviceRemovals
            centralTasks.append(
                Task { [weak self] in
                    for await address in removals { await self?.deviceObjectRemoved(address) }
                })
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
        monitorTask = Task { [weak self] in
            for await discovery in discoveries where discovery.advertisementData.advertisesAny(of: services) {
                await self?.discovered(discovery)
            }
        }
        return nil
    }

    /// bluetoothd's version (``BluetoothdVersionProbe``), logged with how it was found; nil when
    /// it cannot be told.
    private func bluetoothdVersion() async -> BluetoothdVersion? {
        let result: Result<BluetoothdVersionProbe.Found, BluetoothdVersionError>
        if let versionProbe {
            result = await versionProbe.value
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

    private func openBus() async throws -> BlueZBus {
        if let busAddress { return try await BlueZBus(.address(busAddress)) }
        switch configuration.bluetooth.bus {
        case .system: return try await BlueZBus(.system)
        case .session: return try await BlueZBus(.session)
        case .address(let address): return try await BlueZBus(.address(address))
        }
    }

    /// Bluetooth cannot be reached: report it and try again when ``BluetoothRetry`` says.
    private func unavailable(_ problem: BluetoothHealth.Problem, error: any Error) async {
        health = BluetoothHealth(
            adapter: configuration.bluetooth.adapter, lastError: "\(error)", problem: problem, user: health.user)
        let due = retry.failed()
        await gateway?.bluetoothHealthChanged(health)
        logger.debug("Bluetooth retry scheduled", [("attempt", "\(retry.failures)"), ("error", "\(error)")])
        scheduleRetry(at: due)
        if problem == .accessDenied { watchPolicy() }
    }

    private func scheduleRetry(at due: ContinuousClock.Instant) {
        retryTask?.cancel()
        let clock = self.clock
        retryTask = Task { [weak self] in
            // Real delay: BluetoothRetry's backoff before the next attempt to open the bus.
            try? await clock.sleep(until: due, tolerance: nil)
            guard !Task.isCancelled else { return }
            await self?.start()
        }
    }

    /// Refused by the system bus: follow its policy directories, so a fix is tried about a second
    /// after it is saved rather than at the next scheduled retry (up to 8 s later).
    private func watchPolicy() {
        guard policyWatch == nil, busAddress == nil, case .system = configuration.bluetooth.bus,
            let watch = PolicyDirectoryWatch(directories: PolicyDirectoryWatch.systemBusDirectories)
        else { return }
        policyWatch = watch
        let changes = watch.changes
        policyTask = Task { [weak self] in
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
        let draining = ids.flatMap { listeners[$0]?.values ?? [:].values }
        for id in ids {
            forgetSubscriptions(id)
            expectedDisconnects.insert(id)
        }
        for task in connectTasks.values { task.cancel() }
        let targets = ids.compactMap { peripherals[$0] }
        let pending = Array(connectTasks.values)
        await Deadline.run(until: deadline) {
            // Each connect task ends in its catch (its operations fail as the link drops) and cancels
            // its own attempt; the disconnects after it settle whatever that attempt left behind.
            await withTaskGroup(of: Void.self) { group in
                for peripheral in targets { group.addTask { await central.cancelConnection(peripheral) } }
            }
            for task in pending { await task.value }
            await withTaskGroup(of: Void.self) { group in
                for peripheral in targets { group.addTask { await central.disconnect(peripheral) } }
            }
            for held in draining {
                for await _ in held.ended {}
            }
        }
        // A listener whose link did not end by the deadline stops here.
        for held in draining { held.listener.cancel() }
    }

    /// A reloaded configuration; a peripheral stays attached to its device while the device's
    /// match still accepts it. A reload that gives a device its first `passkey` registers the
    /// pairing agent then (it was registered only at start before, so the passkey stayed unused
    /// until a restart).
    func update(configuration: BridgeConfiguration) async {
        let hadPasskey = self.configuration.devices.contains { $0.passkey != nil }
        self.configuration = configuration
        assigned.removeAll()
        packetFilters = packetFilters.filter { configuration.device(id: $0.key)?.deduplicate == true }
        pipeline.replaceConfiguration(configuration)
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

    private func scanFailed(_ error: any Error) {
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
        var owner: String?
        if let bus { owner = await bus.bluezOwner() }
        var updated = health
        updated.bluezOwner = owner
        updated.adapterPresent = state == .poweredOn || state == .poweredOff
        updated.powered = state == .poweredOn
        updated.problem = BluetoothHealth.problem(for: state, bluezRunning: owner != nil)
        // Once passive scanning ran, a manager that went away (bluetoothd restarted without -E)
        // stops every reading: said in health rather than by exiting, and cleared when it is back.
        if updated.problem == nil, passiveRunning, await central?.advertisementMonitorSupport()?.missing != nil {
            updated.problem = .monitorUnsupported
        }
        guard updated != health else { return }
        health = updated
        await gateway?.bluetoothHealthChanged(health)
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
            for id in Set(notifyTasks.keys).union(listeners.keys) { cancelSubscriptions(id) }
            peripherals.removeAll()
            restored = false
        }
        await gateway?.adapterPowered(isOn)
    }
}

extension BLELink {
    // MARK: Discovery

    /// The configured device an advertiser is, if any: a device whose match names this address
    /// first (that includes the instances ``MatchInstances`` split off), then the first other
    /// match. `services` are the advertised service UUIDs and the service-data UUIDs.
    func deviceID(address: String, name: String?, services: [BluetoothUUID]) -> String? {
        let parsed = BluetoothAddress(address)
        func matches(_ device: DeviceConfiguration) -> Bool {
            device.match.matches(address: parsed, name: name, services: services)
        }
        return
            (configuration.devices.first { $0.match.address != nil && matches($0) }
            ?? configuration.devices.first(where: matches))?.id
    }

    /// The id an advertiser caught by `id`'s match is published under: the device itself, or for a
    /// match without an address that already caught another fixed address, an instance of its own
    /// (asked of the gateway once per address, then remembered). Nil: refused at the bound of
    /// instances (asked again with the next advertisement, as an instance may have become idle).
    private func assignedID(_ id: String, address: BluetoothAddress) async -> String? {
        guard configuration.device(id: id)?.match.address == nil, MatchInstances.isFixed(address) else { return id }
        if let known = assigned[address.string] { return known }
        guard let gateway else { return id }
        guard let assignedID = await gateway.assignMatch(address, template: id) else { return nil }
        assigned[address.string] = assignedID
        return assignedID
    }

    private func startScan() {
        // Listen-only scanning goes through advertisement monitors (``startPassiveScan()``), never a discovery session.
        guard scanTask == nil, !discoveryPaused, configuration.bluetooth.scan.mode == .active, let central else {
            return
        }
        let scan = configuration.bluetooth.scan
        scanTask = Task { [weak self] in
            do {
                let discoveries = try await central.scan(
                    services: scan.services, allowDuplicates: scan.duplicates, rssiThreshold: scan.rssiMin)
                for await discovery in discoveries {
                    await self?.discovered(discovery)
                }
            } catch {
                await self?.scanFailed(error)
            }
        }
    }

    func setDiscoveryPaused(_ paused: Bool) {
        discoveryPaused = paused
        if paused {
            scanTask?.cancel()
            scanTask = nil
        } else if powered {
            startScan()
        }
    }

    private func discovered(_ discovery: Discovery) async {
        let time = clock.date
        let address = discovery.peripheral.identifier.string
        let advertisement = discovery.advertisementData
        seen.record(discovery.peripheral.identifier, name: advertisement.localName, rssi: discovery.rssi, at: time)
        let id: String
        if let caughtBy = deviceID(
            address: address, name: advertisement.localName,
            services: advertisement.serviceUUIDs + advertisement.serviceData.keys)
        {
            guard let assigned = await assignedID(caughtBy, address: discovery.peripheral.identifier) else { return }
            id = assigned
        } else if let automatic = await autoDeviceID(discovery) {
            id = automatic
        } else {
            return
        }
        peripherals[id] = discovery.peripheral
        rediscoveryWaiters[id]?.yield(discovery.peripheral)
        // Shared-broker mode: another gateway may own (publish) this passive device; its packet filter
        // still learns every advertisement, so taking over never repeats one the owner published.
        // Paired or trusted objects outlive the device (only shared-broker mode's candidacies ask):
        // two actor hops per advertisement, so not taken when the mode is off.
        var persistent = false
        if configuration.mqtt.sharedBroker {
            let peripheral = discovery.peripheral
            persistent = await peripheral.isPaired
            if !persistent { persistent = await peripheral.isTrusted }
        }
        guard
            let publishes = await gateway?.deviceSeen(
                id, address: address, rssi: discovery.rssi, persistent: persistent)
        else { return }
        guard let device = configuration.device(id: id), let settings = device.advertisement else {
            // Room presence hears every device, decoded or not.
            await gateway?.presenceHeard(id, rssi: discovery.rssi, readings: [])
            return
        }
        let readings: [DecodedReading]
        if let layout = settings.layout {
            let payloads: [[UInt8]] =
                switch settings.layoutSource {
                case .manufacturerData(let company)?: advertisement.manufacturerData[company].map { [$0] } ?? []
                case .anyManufacturerData?:
                    advertisement.manufacturerData.keys.sorted().compactMap { company in
                        DecoderRegistry.payload(
                            advertisement.manufacturerData[company] ?? [], from: .manufacturerData(company),
                            for: .anyManufacturerData)
                    }
                case .serviceData(let service)?: advertisement.serviceData[service].map { [$0] } ?? []
                case nil: []
                }
            readings = payloads.map { layout.reading($0) }
        } else {
            readings = registry.decodeAdvertisement(
                serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
                context: AdvertisementContext(
                    address: discovery.peripheral.identifier, bindKey: settings.bindKey,
                    localName: advertisement.localName, serviceUUIDs: advertisement.serviceUUIDs),
                decoder: settings.decoder)
        }
        await gateway?.presenceHeard(id, rssi: discovery.rssi, readings: readings)
        for reading in readings where reading.isSuccess && isNew(reading, device: device) && publishes {
            pipeline.deliver(
                device: id, fields: reading.fields, raw: nil, rssi: discovery.rssi, sampleTime: time,
                fromConnection: false)
        }
    }

    /// BlueZ removed the object of the device at `address` (``CentralManager/deviceRemovals``):
    /// the configured devices it was are no longer heard (their candidacies may end).
    private func deviceObjectRemoved(_ address: BluetoothAddress) async {
        for id in peripherals.keys.sorted() where peripherals[id]?.identifier == address {
            await gateway?.deviceVanished(id)
        }
    }

    /// Drops advertisers not seen for a minute even when nothing advertises (called every few
    /// seconds by the gateway), so memory falls back once passing devices are gone.
    /// Once the table shrank by ``trimAfter`` entries or more, the allocator's free memory is
    /// given back to the system (``ProcessMemory``): glibc otherwise keeps the peak.
    func pruneSeen() {
        seen.prune(now: clock.date)
        guard seen.released >= Self.trimAfter else { return }
        let released = seen.takeReleased()
        let trimmed = ProcessMemory.releaseFreeMemory()
        logger.debug(
            "advertisers table shrank; free memory given back", [("entries", "\(released)"), ("trimmed", "\(trimmed)")])
    }

    /// Entries dropped from the advertisers table before free memory is given back: half its
    /// bound (``SeenAdvertisers/capacity``), so emptying a full table gives memory back; it only
    /// shrinks that much once passing devices are gone, never per advertisement.
    static let trimAfter = 512

    /// `auto_devices`: the id of a new automatic device for an unconfigured advertiser with a fixed
    /// address whose advertisement a built-in decoder recognises; nil otherwise.
    private func autoDeviceID(_ discovery: Discovery) async -> String? {
        let address = discovery.peripheral.identifier
        guard configuration.autoDevices.enabled, MatchInstances.isFixed(address) else { return nil }
        let advertisement = discovery.advertisementData
        let recognised = registry.decodeAdvertisement(
            serviceData: advertisement.serviceData, manufacturerData: advertisement.manufacturerData,
            context: AdvertisementContext(
                address: address, bindKey: configuration.autoDevices.bindKey(for: address),
                localName: advertisement.localName, serviceUUIDs: advertisement.serviceUUIDs)
        ).first { $0.isSuccess }
        guard let decoder = recognised?.decoder else { return nil }
        let name = advertisement.localName ?? seen.entry(for: address)?.name
        return await gateway?.addAutoDevice(address, decoder: decoder, name: name)
    }

    /// BTHome and MiBeacon de-duplication (`deduplicate`, on by default): false for a reading that
    /// repeats the device's previous packet id or replays an older encryption counter.
    private func isNew(_ reading: DecodedReading, device: DeviceConfiguration) -> Bool {
        guard device.deduplicate, BTHomePacketFilter.decoders.contains(reading.decoder) else { return true }
        switch packetFilters[device.id, default: BTHomePacketFilter()].judge(reading) {
        case .new: return true
        case .duplicate: return false
        case .replayed:
            logger.debug("replayed \(reading.decoder) advertisement dropped", [("device", device.id)])
            return false
        }
    }

    /// `bridge/request/scan`: advertisers seen during the next `duration`.
    func scanSnapshot(for duration: Duration) async -> JSONValue {
        let since = clock.date
        // Real delay: the scan window the request asked for.
        try? await clock.sleep(for: duration)
        return .array(
            seen.seen(since: since).map { bluetoothAddress, info in
                let address = bluetoothAddress.string
                return .object([
                    JSONMember("address", .string(address)),
                    JSONMember("name", info.name.map(JSONValue.string) ?? .null),
                    JSONMember("rssi", info.rssi.map { .int(Int64($0)) } ?? .null),
                    JSONMember(
                        "device",
                        deviceID(address: address, name: info.name, services: []).map(JSONValue.string) ?? .null),
                ])
            })
    }

    /// State restoration: peripherals known from earlier runs are usable at once, without a scan.
    private func restoreKnownPeripherals() async {
        // Claimed before the first suspension: start() and the powered state can both be here.
        guard !restored, let central, let gateway else { return }
        restored = true
        guard let known = try? await gateway.state.knownPeripherals() else {
            restored = false
            return
        }
        let wanted = known.filter { configuration.device(id: $0.deviceID) != nil }
        let addresses = wanted.compactMap { BluetoothAddress($0.address) }
        let restored = await central.retrievePeripherals(withIdentifiers: addresses)
        for peripheral in restored {
            guard let entry = wanted.first(where: { $0.address == peripheral.identifier.string }) else { continue }
            peripherals[entry.deviceID] = peripheral
            logger.info("restored known peripheral", [("device", entry.deviceID), ("address", entry.address)])
            await gateway.deviceSeen(entry.deviceID, address: entry.address, rssi: nil)
        }
    }
}

extension BLELink {
    // MARK: Connections

    /// Connects, resolves services, subscribes to every configured characteristic (verifying
    /// each notifies), reads the polled ones once, then reports to the gateway.
    func connect(_ id: String) {
        guard let central, let device = configuration.device(id: id) else {
            let gateway = self.gateway
            Task { await gateway?.deviceConnectFailed(id, error: "not seen by the adapter") }
            return
        }
        guard !stopped else { return }
        let timeout = configuration.bluetooth.connectTimeout
        nextConnectTask += 1
        let token = nextConnectTask
        connectTasks[token] = Task {
            defer { connectTasks[token] = nil }
            // The device forgotten and found again during recovery is a new peripheral.
            guard var peripheral = await peripheral(forConnecting: id, central: central) else {
                await gateway?.deviceUnseen(id)
                return
            }
            var timeline = ConnectTimeline(at: clock.now)
            do {
                try Task.checkCancellation()
                try await central.connect(peripheral, timeout: timeout)
                timeline.step("connect", at: clock.now)
                var services = try await resolve(id, peripheral: peripheral)
                timeline.step("resolve", at: clock.now)
                while let missing = missingConfiguredAttribute(id, device: device) {
                    // Waits for late characteristics, reconnects, or forgets and rediscovers the device, in
                    // place; or throws (given up, with the fix).
                    peripheral = try await recoverMissing(
                        id, missing, device: device, peripheral: peripheral, central: central, timeout: timeout)
                    services = try await resolve(id, peripheral: peripheral)
                    timeline.step("recovery", at: clock.now)
                }
                cacheRecovery[id]?.servicesComplete()
                try await subscribe(id, device: device, peripheral: peripheral)
                timeline.step("subscribe", at: clock.now)
                await remember(id, peripheral: peripheral, device: device, services: services)
                await gateway?.deviceConnected(id, services: services.map(\.shortString))
                timeline.step("report", at: clock.now)
                logger.debug("connect timeline", [("device", id)] + timeline.fields)
                await describe(id, peripheral: peripheral)
            } catch {
                cancelSubscriptions(id)
                expectedDisconnects.insert(id)
                await central.cancelConnection(peripheral)
                let reason = (error as? BluetoothError).flatMap(Self.refusedPairing) ?? "\(error)"
                await gateway?.deviceConnectFailed(id, error: reason)
            }
        }
    }

    /// The peripheral to connect `id` to: the one discovery or the restoration found, else the one BlueZ knows
    /// at the address `id` had in an earlier connection. The restoration at power-on can run before bluetoothd
    /// exported its stored devices again (after a bluetoothd restart by SIGTERM the simulator's pool asked to
    /// connect 1 ms after the power-on and failed "not seen by the adapter", then waited out a 1–5 s backoff).
    private func peripheral(forConnecting id: String, central: CentralManager) async -> Peripheral? {
        if let known = peripherals[id] { return known }
        guard let entry = try? await gateway?.state.knownPeripherals().first(where: { $0.deviceID == id }),
            let address = BluetoothAddress(entry.address),
            let restored = await central.retrievePeripherals(withIdentifiers: [address]).first
        else { return nil }
        if peripherals[id] == nil { peripherals[id] = restored }
        logger.info("restored known peripheral at connect", [("device", id), ("address", entry.address)])
        return peripherals[id]
    }

    /// Reads the manufacturer, model and firmware of the Device Information service (when the
    /// device has it; once per run) for the Home Assistant device block.
    private func describe(_ id: String, peripheral: Peripheral) async {
        guard !described.contains(id) else { return }
        var strings: [UInt16: String] = [:]
        for uuid: UInt16 in [0x2A29, 0x2A24, 0x2A26] {
            let target = CharacteristicTarget(BluetoothUUID(uuid), service: BluetoothUUID(UInt16(0x180A)))
            guard let entry = try? characteristic(target, of: id),
                let value = try? await peripheral.readValue(for: entry.characteristic)
            else { continue }
            let text = String(decoding: Array(value).prefix { $0 != 0 }, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty { strings[uuid] = text }
        }
        described.insert(id)
        guard !strings.isEmpty else { return }
        await gateway?.deviceDescribed(
            id, manufacturer: strings[0x2A29], model: strings[0x2A24], firmware: strings[0x2A26])
    }

    /// The connect rules of every peripheral: the library's, with the configured resolve limit for cached devices.
    var connectionLifecycle: ConnectionLifecycle.Configuration {
        var lifecycle = ConnectionLifecycle.Configuration()
        lifecycle.cachedResolveTimeout = configuration.bluetooth.cachedResolveTimeout
        return lifecycle
    }

    /// One call into the peripheral: its services come with their characteristics (a call per service
    /// rebuilt the whole tree each time; the step took 0.46 s on the loaded VM tier).
    func resolve(_ id: String, peripheral: Peripheral) async throws -> [BluetoothUUID] {
        let services = try await peripheral.discoverServices()
        gatt[id] = ResolvedGATT(device: id, services: services.map { ($0.uuid, $0.characteristics) })
        return services.map(\.uuid)
    }

    /// Whether a subscribed characteristic the resolved tree lacks is one the device served before at this
    /// address (``LateCharacteristicPolicy``), so it may be late rather than absent.
    func servedBefore(_ id: String, device: DeviceConfiguration, address: String) async -> Bool {
        let policy = LateCharacteristicPolicy()
        let known = (try? await gateway?.state.knownPeripherals()) ?? []
        return device.subscribe.contains { subscription in
            subscription.mode != .read
                && (try? characteristic(
                    CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)) == nil
                && policy.waits(for: subscription.characteristic, device: id, address: address, known: known)
        }
    }

    /// Waits until `deadline` for the subscribed characteristics the resolved tree lacks; the caller
    /// resolves again afterwards. A characteristic that does not appear is left to the next recovery step.
    func awaitLateCharacteristics(
        _ id: String, device: DeviceConfiguration, peripheral: Peripheral, until deadline: ContinuousClock.Instant
    ) async throws {
        for subscription in device.subscribe where subscription.mode != .read {
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            let missing: CommandFailure
            do {
                _ = try characteristic(target, of: id)
                continue
            } catch {
                missing = error
            }
            let left = deadline - clock.now
            guard left > .zero else { break }
            logger.info(
                "waiting for the device to show a subscribed characteristic it served before",
                [("device", id), ("reason", missing.message)])
            let found = try await peripheral.waitForCharacteristic(
                subscription.characteristic, service: subscription.service, timeout: left)
            if found == nil { break }
        }
    }

    /// The first configured subscription the resolved GATT tree cannot serve, as the failure naming it.
    func missingConfiguredAttribute(_ id: String, device: DeviceConfiguration) -> CommandFailure? {
        for subscription in device.subscribe {
            do {
                _ = try characteristic(
                    CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)
            } catch {
                return error
            }
        }
        return nil
    }

    /// The characteristic a subscription or command means (within its service when it names one).
    func characteristic(_ target: CharacteristicTarget, of id: String) throws(CommandFailure)
        -> ResolvedGATT.Entry
    {
        guard let gatt = gatt[id] else { throw CommandFailure(.deviceUnavailable, "\(id) is not connected") }
        return try gatt.find(target)
    }

    /// How readings of `entry` are named: its subscription's rank, characteristic and service names.
    private func source(_ entry: ResolvedGATT.Entry, device: DeviceConfiguration?) -> FieldNamer.Source {
        let subscriptions = device?.subscribe ?? []
        let uuid = entry.characteristic.uuid
        let rank =
            subscriptions.firstIndex { $0.characteristic == uuid && ($0.service == nil || $0.service == entry.service) }
            ?? subscriptions.count
        return FieldNamer.Source(
            rank: rank, characteristic: FieldNamer.characteristicName(uuid),
            service: AssignedNumbers.serviceName(for: entry.service))
    }

    /// The layout of the subscription `source` ranks as, if any (a fresh read or raw notification of a
    /// subscribed characteristic decodes like its subscription).
    private static func layout(of source: FieldNamer.Source, device: DeviceConfiguration?) -> ByteLayout? {
        guard let subscriptions = device?.subscribe, subscriptions.indices.contains(source.rank) else { return nil }
        return subscriptions[source.rank].layout
    }

    /// Enables every configured subscription's notifications at once (each is a round trip to the
    /// peer through bluetoothd: `AcquireNotify` answers after the peer acknowledged the CCCD write,
    /// 0.3–1.6 s on the loaded VM tier), then keeps their listeners; when one fails, the others are
    /// let go and the first failure is thrown.
    private func subscribe(_ id: String, device: DeviceConfiguration, peripheral: Peripheral) async throws {
        cancelSubscriptions(id)
        let pipeline = self.pipeline
        let clock = self.clock
        let logger = self.logger
        let since = clock.now
        // The first value after the connect, logged once (debug): the peer's share of a recovery.
        let firstValue = FirstValueLog()
        var targets: [(GATTCharacteristic, ReadingPipeline.Subscription)] = []
        for subscription in device.subscribe where subscription.mode != .read {
            let entry = try characteristic(
                CharacteristicTarget(subscription.characteristic, service: subscription.service), of: id)
            let context = ReadingPipeline.Subscription(
                characteristic: subscription.characteristic, decoder: subscription.decoder,
                layout: subscription.layout, source: source(entry, device: device),
                command: GatewayModel.stateCommand(
                    characteristic: subscription.characteristic, service: entry.service, of: device))
            targets.append((entry.characteristic, context))
        }
        let results = await withTaskGroup(
            of: (GATTCharacteristic, Result<HeldListener, any Error>).self
        ) { group in
            for (characteristic, context) in targets {
                group.addTask {
                    do {
                        // Runs on the notify socket's thread; the end of the notifications comes with the
                        // disconnection event, which reconnects. `ended` finishes when the link drop
                        // has delivered the socket's last values (what ``stop(until:)`` waits for).
                        let (ended, end) = AsyncStream.makeStream(of: Void.self)
                        let listener = try await peripheral.notifications(
                            for: characteristic,
                            onValue: { value in
                                if firstValue.take() {
                                    logger.debug(
                                        "first notification since subscribing",
                                        [("device", id), ("after", "\((clock.now - since).inSeconds)s")])
                                }
                                pipeline.received(
                                    Array(value), device: id, subscription: context, sampleTime: clock.date)
                            },
                            onEnd: { _ in end.finish() })
                        return (characteristic, .success(HeldListener(listener: listener, ended: ended)))
                    } catch {
                        return (characteristic, .failure(error))
                    }
                }
            }
            var results: [(GATTCharacteristic, Result<HeldListener, any Error>)] = []
            for await result in group { results.append(result) }
            return results
        }
        var failure: (any Error)?
        for (characteristic, result) in results {
            switch result {
            case .success(let listener): listeners[id, default: [:]][characteristic.id] = listener
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure {
            cancelSubscriptions(id)
            throw failure
        }
    }

    /// Lets go of `id`'s listeners without cancelling them (their channels have ended or are ending).
    private func forgetSubscriptions(_ id: String) {
        for task in notifyTasks[id]?.values ?? [:].values { task.cancel() }
        notifyTasks[id] = nil
        listeners[id] = nil
    }

    func cancelSubscriptions(_ id: String) {
        for task in notifyTasks[id]?.values ?? [:].values { task.cancel() }
        notifyTasks[id] = nil
        for held in listeners[id]?.values ?? [:].values { held.listener.cancel() }
        listeners[id] = nil
    }

    private func received(
        _ bytes: [UInt8], device id: String, characteristic: BluetoothUUID, decoder: String?, layout: ByteLayout?,
        source: FieldNamer.Source, service: BluetoothUUID? = nil
    ) {
        let command = configuration.device(id: id).flatMap {
            GatewayModel.stateCommand(characteristic: characteristic, service: service, of: $0)
        }
        pipeline.received(
            bytes, device: id,
            subscription: ReadingPipeline.Subscription(
                characteristic: characteristic, decoder: decoder, layout: layout, source: source, command: command),
            sampleTime: clock.date)
    }

    private func readPolled(_ id: String, device: DeviceConfiguration, peripheral: Peripheral) async {
        for subscription in device.subscribe where subscription.mode == .read {
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            let entry: ResolvedGATT.Entry
            do {
                entry = try characteristic(target, of: id)
            } catch {
                logger.warning("polled characteristic not found", [("device", id), ("reason", error.message)])
                continue
            }
            guard let value = try? await peripheral.readValue(for: entry.characteristic) else { continue }
            received(
                Array(value), device: id, characteristic: subscription.characteristic, decoder: subscription.decoder,
                layout: subscription.layout, source: source(entry, device: device), service: entry.service)
        }
    }

    /// Pool action `poll`: read every polled characteristic, then report.
    func poll(_ id: String) {
        Task {
            if let peripheral = peripherals[id], let device = configuration.device(id: id) {
                await readPolled(id, device: device, peripheral: peripheral)
            }
            await gateway?.poolEvent(.pollFinished(id))
        }
    }

    func disconnect(_ id: String) {
        cancelSubscriptions(id)
        expectedDisconnects.insert(id)
        guard let central, let peripheral = peripherals[id] else {
            let gateway = self.gateway
            Task { await gateway?.deviceDisconnected(id, expected: true) }
            return
        }
        Task {
            await central.cancelConnection(peripheral)
            await self.disconnectedDevice(id)
        }
    }

    private func disconnected(_ event: DisconnectEvent) async {
        guard let id = peripherals.first(where: { $0.value.identifier == event.identifier })?.key else { return }
        await disconnectedDevice(id)
    }

    private func disconnectedDevice(_ id: String) async {
        // The link is down: the peripheral has ended its subscriptions already, each once its notify
        // socket was read to the end. Cancelling our listeners here (before that read, under load)
        // would drop the notifications sent just before the drop, so they are only let go of; the
        // peripheral's channels release them when they finish. (An expected disconnect cancelled
        // them in `disconnect(_:)` already.)
        forgetSubscriptions(id)
        if reconnectingInPlace.contains(id) { return }
        let expected = expectedDisconnects.remove(id) != nil
        await gateway?.deviceDisconnected(id, expected: expected)
    }

    private func remember(_ id: String, peripheral: Peripheral, device: DeviceConfiguration, services: [BluetoothUUID])
        async
    {
        guard let gateway else { return }
        let known = KnownPeripheral(
            deviceID: id, address: peripheral.identifier.string, addressType: peripheral.identifier.type.rawValue,
            services: services.map(\.shortString),
            subscriptions: device.subscribe.filter { $0.mode != .read }.map(\.characteristic.shortString),
            lastSeen: clock.date)
        try? await gateway.state.remember(known)
    }
}

extension BLELink {
    // MARK: Commands

    /// Executes a validated command's steps in order on the connected device.
    func execute(_ steps: [GatewayCommand], device id: String) async -> Result<JSONValue?, CommandFailure> {
        var data: [JSONMember] = []
        for step in steps {
            do {
                if let member = try await execute(step, device: id) { data.append(member) }
            } catch let failure as CommandFailure {
                return .failure(failure)
            } catch let error as BluetoothError {
                return .failure(Self.failure(error))
            } catch {
                return .failure(CommandFailure(.bleError, "\(error)"))
            }
        }
        return .success(data.isEmpty ? nil : .object(data))
    }

    /// Whether a `notify`/`indicate` subscription of the device's configuration resolves to `key`.
    private func isSubscribed(_ key: GATTAttributeID, device id: String) -> Bool {
        let subscriptions = configuration.device(id: id)?.subscribe ?? []
        return subscriptions.contains { subscription in
            guard subscription.mode != .read else { return false }
            let target = CharacteristicTarget(subscription.characteristic, service: subscription.service)
            return (try? characteristic(target, of: id))?.characteristic.id == key
        }
    }

    /// The `value_too_long` message: names the limit and, for writes without response, the way out.
    static func tooLong(_ length: Int, limit: Int, type: WriteType) -> String {
        switch type {
        case .withoutResponse:
            "\(length) bytes; a write without response carries at most \(limit) bytes on this connection "
                + "(ATT MTU \(limit + ATTLimits.headerLength) − 3); a write with response takes up to "
                + "\(ATTLimits.maximumAttributeValueLength)"
        case .withResponse:
            "\(length) bytes; a write with response carries at most \(limit) bytes (the ATT attribute limit)"
        }
    }

    static func failure(_ error: BluetoothError) -> CommandFailure {
        if let refused = refusedPairing(error) { return CommandFailure(.notPaired, refused) }
        return switch error.code {
        case .timeout, .connectionTimeout: CommandFailure(.timeout, error.description)
        case .notConnected, .peripheralDisconnected, .notPoweredOn, .connectionFailed, .unknownDevice:
            CommandFailure(.deviceUnavailable, error.description)
        case .invalidValueLength: CommandFailure(.valueTooLong, error.description)
        case .insufficientAuthentication:
            CommandFailure(
                .notPaired,
                "\(error.description); the device needs pairing and the pairing through the gateway's agent "
                    + "failed: set the device's \"passkey\" to the 6 digits it shows (or remove a stale bond "
                    + "with `bluetoothctl remove <address>`)")
        default: CommandFailure(.bleError, error.description)
        }
    }

    private func execute(_ step: GatewayCommand, device id: String) async throws -> JSONMember? {
        guard let peripheral = peripherals[id] else {
            throw CommandFailure(.deviceUnavailable, "\(id) is not connected")
        }
        switch step {
        case .write(_, let uuid, let value, let type, let name, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let limit = await peripheral.maximumWriteValueLength(for: type)
            guard value.count <= limit else {
                throw CommandFailure(.valueTooLong, Self.tooLong(value.count, limit: limit, type: type))
            }
            try await peripheral.writeValue(Data(value), for: entry.characteristic, type: type)
            let command = configuration.device(id: id)?.command(named: name ?? "")
            let echoed =
                command.flatMap { GatewayModel.namedCommand($0).format.decode(value) }
                ?? .string(Hex.string(value))
            return JSONMember(name ?? uuid.shortString, echoed)
        case .read(_, let uuid, let name, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let bytes = Array(try await peripheral.readValue(for: entry.characteristic))
            let device = configuration.device(id: id)
            let source = source(entry, device: device)
            received(
                bytes, device: id, characteristic: uuid, decoder: nil, layout: Self.layout(of: source, device: device),
                source: source, service: entry.service)
            if let name, let command = configuration.device(id: id)?.command(named: name),
                let value = GatewayModel.namedCommand(command).format.decode(bytes)
            {
                return JSONMember(name, value)
            }
            let reading = registry.decode(bytes, uuid: uuid)
            if let name, reading.isSuccess {
                let fields = reading.fields.map { JSONMember($0.name, JSONValue($0.value)) }
                return JSONMember(name, fields.count == 1 ? fields[0].value : .object(fields))
            }
            return JSONMember(name ?? "value", .string(Hex.string(bytes)))
        case .notify(_, let uuid, let enable, let service):
            let entry = try characteristic(CharacteristicTarget(uuid, service: service), of: id)
            let key = entry.characteristic.id
            // A configured subscription already streams it (decoded, and on the raw topic): raw
            // notify neither replaces nor ends it.
            guard !isSubscribed(key, device: id) else { return nil }
            if enable {
                let stream = try await peripheral.notifications(for: entry.characteristic)
                let device = configuration.device(id: id)
                let source = source(entry, device: device)
                let layout = Self.layout(of: source, device: device)
                notifyTasks[id, default: [:]][key]?.cancel()
                notifyTasks[id, default: [:]][key] = Task { [weak self] in
                    do {
                        for try await value in stream {
                            await self?.received(
                                Array(value), device: id, characteristic: uuid, decoder: "raw", layout: layout,
                                source: source, service: entry.service)
                        }
                    } catch {}
                }
            } else {
                notifyTasks[id]?[key]?.cancel()
                notifyTasks[id]?[key] = nil
            }
            return nil
        case .connect:
            return nil
        case .disconnect:
            disconnect(id)
            return nil
        case .scan, .listDevices, .reloadConfiguration, .restart, .adopt, .removeDevice:
            return nil
        }
    }
}
