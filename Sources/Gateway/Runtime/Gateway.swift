import BlueZ
import Bluetooth
import Configuration
import Foundation
import JSON
import Logging
import MQTT
import Outbox
import Publisher
import TaskScope
import Timekeeping

/// The gateway: BlueZ central → decoders → outbox → MQTT, and commands back from MQTT.
///
/// ```swift
/// let gateway = try await Gateway(configuration: configuration, options: GatewayOptions())
/// async let running: Void = gateway.run { outcome in … }   // every task of the gateway is a child of this
/// … await gateway.reload(newConfiguration)   // SIGHUP
/// await gateway.stop()                         // SIGTERM: drain, publish offline, close; run() returns
/// await running
/// ```
///
/// One actor owns the state; the pure parts (``ConnectionScheduler``, ``CommandGate``,
/// ``ReadingRouter``) decide, and this actor performs their actions. Readings do not pass through
/// the actor: ``ReadingPipeline`` takes them from the thread that received them to the publisher,
/// and tells the actor what it must know (activity, RSSI, new fields) in ``ReadingPipeline/events``.
package actor Gateway {
    let logger = Logger(label: "gateway")
    let options: GatewayOptions
    var model: GatewayModel
    /// The configuration as loaded (``model`` holds it expanded by ``instances``).
    var configured: BridgeConfiguration
    /// The devices matches without an address caught, each with its own id (kept in ``state``).
    var instances = MatchInstances()
    /// The zero-configuration devices (`auto_devices`, kept in ``state``).
    var autoDevices = AutoDevices()
    /// Devices whose connect found no BlueZ object (``deviceUnseen(_:)``): their next sighting is reported to the pool.
    var unseenByBlueZ: Set<String> = []
    /// Automatic devices adopted over MQTT (`bridge/request/device/adopt`, kept in ``state``).
    var adopted = AdoptedDevices()
    var gate: CommandGate
    var scheduler: ConnectionScheduler
    let pipeline: ReadingPipeline
    let store: OutboxStore
    let state: GatewayStateStore
    let client: MQTTClient
    let publisher: Publisher
    let startedAt: Date
    let startInstant: ContinuousClock.Instant
    /// The time as the gateway reads it (``GatewayOptions/clock``).
    let clock: any BridgeClock
    var counters = GatewayCounters()
    /// When the allocator's free memory is given back after a burst (checked at each availability sweep).
    var freeMemory = FreeMemorySchedule()
    var devices: [String: DeviceStatus] = [:]
    /// The last `bridge/devices` payload published in this connection (only a change is sent again).
    var publishedDevices: [UInt8]?
    /// The last `bridge/info` payload published in this connection.
    var publishedInfo: [UInt8]?
    /// Discovery topics announced per device (persisted, for removals).
    var announced: [String: [String]] = [:]
    /// Shared-broker mode: the devices whose entities this gateway announced while speaking for
    /// them (announced again when it comes to speak for one, ``discoveryDutyChanged(_:)``).
    var voicedDiscovery: Set<String> = []
    /// What produced each field entity announced (persisted, for removing those of
    /// characteristics no longer read).
    var discoverySources = DiscoverySources()
    /// The one task group every task the gateway starts belongs to (issue 20): the loops below,
    /// the command readers, scans, timers and the answer lanes, the link's and the pipeline's.
    /// ``run(started:)`` hosts it in its caller's task; `stop` closes it last, so no task of the
    /// gateway outlives it.
    let scope = TaskScope.hostedByCaller()
    /// The loops over the client's, the pipeline's and the timers' events; cancelled by `stop`
    /// once the readings are out.
    var tasks: [ScopedTask] = []
    /// The tasks reading the command subscriptions, per filter; they end with the connection
    /// (see `stop`), or when a reload drops their filter (Home Assistant's status topic).
    var commandTasks: [String: ScopedTask] = [:]
    /// Command subscriptions opened but not read yet (Bluetooth not started), and the filters opened.
    var unreadCommandStreams: [String: AsyncStream<MQTTMessage>] = [:]
    var commandFilters: Set<String> = []
    var readingCommands = false
    var discoveryResend: ScopedTask?
    var wake: ScopedTask?
    var stopping = false
    var commandsInFlight = 0 {
        didSet { if commandsInFlight == 0 { resumeCommandWaiter() } }
    }
    /// The stop waiting for the commands in flight to finish (``commandsFinished()``).
    var commandWaiter: CheckedContinuation<Void, Never>?
    var pendingCommands: [String: [PendingCommand]] = [:]
    /// Bridge `scan` requests in their window, by command id; cut short by the stop.
    var scanTasks: [Int: ScopedTask] = [:]
    var nextCommandID = 0
    /// Refused response topics are logged at most once a minute.
    var responseTopicLog = LogThrottle()
    /// Refused commands are logged at most 5 a second (a flood wrote 23 MB of log, issue 19 D12);
    /// the next line says how many were held back.
    var commandRefusalLog = LogThrottle(interval: .seconds(1), burst: 5)
    /// Automatic devices and match instances refused at the bound: logged at most once a minute.
    var autoDeviceRefusalLog = LogThrottle()
    /// Automatic devices and match instances not added because another address has their id:
    /// logged at most once a minute.
    var idCollisionLog = LogThrottle()
    var instanceRefusalLog = LogThrottle()
    /// Topics of retained commands already logged (each once).
    var retainedCommandTopics: Set<String> = []
    /// How long a command may wait for its device (connect included).
    var commandTimeout: Duration { model.configuration.bluetooth.connectTimeout + .seconds(5) }
    var ble: BLELink?
    /// The thread that reads the devices' `AcquireNotify` sockets (`blebridge.notify`), the
    /// gateway's own from its start; `stop` shuts it down once the link and every task have ended.
    var notifyPoller: NotifySocketPoller?
    /// What is known about Bluetooth (``BLELink`` reports every change).
    var bluetooth: BluetoothHealth
    /// Responses, events and health, in order within each ``AnswerLane``, for the lane's task that
    /// publishes them (`send`): answers to device commands wait in their own lane, so a flood of
    /// them never holds up a bridge request's answer.
    let outgoing: [AnswerLane: AsyncStream<MQTTMessage>.Continuation]
    private let outgoingMessages: [AnswerLane: AsyncStream<MQTTMessage>]
    private var outgoingTasks: [ScopedTask] = []
    /// Readings that brought new fields, for the one task that records and announces them
    /// (``announce(_:)``), so the readings loop never waits for the broker or the outbox.
    let newFields: AsyncStream<ReadingPipeline.Event>.Continuation
    private let newFieldEvents: AsyncStream<ReadingPipeline.Event>
    /// Responses decided after the queue closed (the last moments of a shutdown); see `stop`.
    var lateResponses: [MQTTMessage] = []
    /// Answers dropped because their lane was full, logged at most once a minute.
    var droppedAnswerLog = LogThrottle()
    /// What `systemctl status` should show (see `Gateway+Status.swift`); the last one yielded.
    var serviceStatus = ServiceStatus()
    /// The outbox figures the last health tick read (on the outbox thread), for a health message
    /// that must not wait for that thread (``bluetoothHealthChanged(_:)``).
    var lastPublisherStats: PublisherStats?
    let statusContinuation: AsyncStream<ServiceStatus>.Continuation
    /// Every change of ``ServiceStatus``, newest only (a slow reader skips to the latest); ends at `stop`.
    package nonisolated let statusUpdates: AsyncStream<ServiceStatus>
    /// `bridge/request/config/reload` and `bridge/request/restart`, for the owner to carry out
    /// (only the kinds in ``GatewayOptions/controlRequests``); ends at `stop`.
    package nonisolated let controlRequests: AsyncStream<GatewayControlRequest>
    let controlContinuation: AsyncStream<GatewayControlRequest>.Continuation
    /// `bridge/logging`: warnings and errors from the log tap, published while connected.
    let loggingRecords: AsyncStream<LogRecord>
    let loggingContinuation: AsyncStream<LogRecord>.Continuation
    var loggingTap: Int?
    /// `bridge/event` messages decided while the broker was away (the latest 100), sent at the next connection.
    var pendingEvents: [MQTTMessage] = []
    /// Shared-broker mode (`Gateway+SharedBroker.swift`): when the gateway record goes out, the
    /// timer armed for a change that came too soon, the other gateways, and the load figures.
    var recordSchedule = GatewayRecordSchedule()
    var recordTimer: ScopedTask?
    var peers: GatewayPeers
    var loadSample: (published: Int, at: ContinuousClock.Instant)?
    var readingsPerSecond: Double?
    /// Shared-broker mode: who holds each connected device (`Gateway+Ownership.swift`), nil
    /// without the mode; its timer and the deadline it is armed for.
    var ownership: OwnershipCoordinator?
    /// Its actions, performed in the order decided (``OrderedActions``).
    var ownershipActions = OrderedActions<OwnershipCoordinator.Action>()
    /// ``BLELink``'s numbered events, let in the order the link decided them (``linkEvent(_:number:)``).
    var linkEventOrder = ArrivalOrder<CheckedContinuation<Void, Never>>()
    /// Shared-broker mode: the other gateways whose retained candidacy for a device (configured
    /// here or not) is up, per device; a request naming a device this gateway does not know is
    /// left to them (``sharedRequestDuty(_:payload:)``).
    var candidaciesElsewhere: [String: Set<String>] = [:]
    /// The timer at ``ownership``'s next deadline.
    var ownershipWakeUp = WakeUp()
    /// Shared-broker mode with Home Assistant: the configs of owned devices that name another
    /// gateway's bridge, announced again (`Gateway+SharedDiscovery.swift`), and its timer.
    var viaRepair: ViaDeviceRepair?
    var viaRepairWakeUp = WakeUp()
    /// Room presence (`Gateway+Presence.swift`), nil without `presence.room`, and its timer.
    var presence: PresenceCoordinator?
    var presenceWakeUp = WakeUp()

    package init(configuration: BridgeConfiguration, options: GatewayOptions = GatewayOptions()) async throws {
        self.options = options
        self.clock = options.clock
        self.startedAt = options.clock.date
        self.startInstant = options.clock.now
        let model = GatewayModel(configuration: configuration)
        self.model = model
        self.configured = configuration
        self.bluetooth = BluetoothHealth(adapter: configuration.bluetooth.adapter)
        self.peers = GatewayPeers(me: configuration.gatewayID)
        self.gate = CommandGate(policy: model.commandPolicy)
        self.scheduler = Self.makeScheduler(model, now: options.clock.now)
        self.ownership = Self.makeOwnership(model)
        self.presence = Self.makePresence(configuration)
        let router = ReadingRouter(
            topics: model.topics, qos: OutboxQoS(rawValue: configuration.mqtt.qos) ?? .atLeastOnce,
            rawTopics: configuration.mqtt.rawTopics, discoveryBuilder: model.discoveryBuilder,
            devices: model.discoveryDevices)
        let outbox = configuration.outbox
        let store = try await OutboxStore(
            path: options.outboxPath ?? outbox.path,
            options: OutboxOptions(
                synchronous: outbox.synchronous == .full ? .full : .normal, maxMessages: outbox.maxMessages,
                maxBytes: outbox.maxBytes, maxAge: outbox.maxAge), clock: options.clock)
        self.store = store
        self.state = GatewayStateStore(store: store)
        self.client = MQTTClient(configuration: try Self.mqttConfiguration(configuration, options: options))
        let publisher = Publisher(
            store: store, client: client,
            options: PublisherOptions(
                window: max(1, outbox.inflight),
                mode: outbox.mode == .durable ? .durable : .memoryFirst(spillAfter: outbox.spillAfter)))
        self.publisher = publisher
        self.pipeline = ReadingPipeline(
            router: router, namer: FieldNamer(configuration: configuration), publisher: publisher,
            stateWindow: configuration.mqtt.stateWindow,
            throttle: ReadingThrottle(policies: ReadingThrottle.policies(configuration)), clock: options.clock,
            scope: scope)
        var streams: [AnswerLane: AsyncStream<MQTTMessage>] = [:]
        var continuations: [AnswerLane: AsyncStream<MQTTMessage>.Continuation] = [:]
        for lane in AnswerLane.allCases {
            (streams[lane], continuations[lane]) = AsyncStream.makeStream(
                of: MQTTMessage.self, bufferingPolicy: .bufferingOldest(lane.capacity))
        }
        (outgoingMessages, outgoing) = (streams, continuations)
        // Unbounded: one event per field a device reports for the first time.
        (newFieldEvents, newFields) = AsyncStream.makeStream(of: ReadingPipeline.Event.self)
        (statusUpdates, statusContinuation) = AsyncStream.makeStream(
            of: ServiceStatus.self, bufferingPolicy: .bufferingNewest(1))
        (controlRequests, controlContinuation) = AsyncStream.makeStream(of: GatewayControlRequest.self)
        (loggingRecords, loggingContinuation) = AsyncStream.makeStream(
            of: LogRecord.self, bufferingPolicy: .bufferingNewest(Self.loggingBacklog))
        for device in configuration.devices {
            devices[device.id] = DeviceStatus(address: device.match.address?.string)
        }
    }

    /// How often passive and on-demand devices are checked for silence (``refreshAvailability()``).
    static let availabilitySweep: Duration = .seconds(5)

    static func makeScheduler(_ model: GatewayModel, now: ContinuousClock.Instant) -> ConnectionScheduler {
        let policy = ReconnectPolicy.default
        return ConnectionScheduler(
            maxConnections: model.configuration.bluetooth.maxConnections,
            coordinated: model.configuration.mqtt.sharedBroker, devices: model.schedulerSpecs, now: now,
            backoff: { attempt in
                var generator = SystemRandomNumberGenerator()
                return policy.delay(attempt: attempt, using: &generator)
            })
    }

    static func mqttConfiguration(_ configuration: BridgeConfiguration, options: GatewayOptions) throws
        -> MQTTConfiguration
    {
        let settings = configuration.mqtt
        let topics = GatewayModel(configuration: configuration).topics
        var password: MQTTSecret?
        if let file = settings.passwordFile {
            password = .file(file)
        } else if let variable = settings.passwordEnvironmentVariable {
            password = .environment(variable)
        }
        var tls: MQTTTLSConfiguration?
        if settings.url.usesTLS || settings.tls.caFile != nil {
            tls = MQTTTLSConfiguration(
                caFile: settings.tls.caFile, certificateFile: settings.tls.certFile, keyFile: settings.tls.keyFile,
                insecure: settings.tls.insecure)
        }
        return try MQTTConfiguration(
            url: options.brokerURL ?? settings.url.description, clientID: settings.clientID,
            protocolVersion: settings.protocolVersion == .v5 ? .v5 : .v311, username: settings.username,
            password: password, keepAlive: settings.keepAlive, cleanSession: settings.cleanSession, tls: tls,
            will: MQTTMessage(
                topic: topics.bridgeState, payload: offlineState(configuration), qos: .atLeastOnce, retain: true),
            maximumReconnectDelay: maximumReconnectDelay, maximumPacketSize: maximumInboundPacketSize,
            sendMaximum: min(65535, configuration.outbox.inflight + ownMessagesInFlight))
    }

    /// On top of `outbox.inflight` (the readings' window), the QoS 1 messages the gateway publishes
    /// outside it (command answers, availability, discovery) that libmosquitto puts on the wire at
    /// once. Without a send maximum libmosquitto kept 20 on the wire whatever `outbox.inflight` said:
    /// no measurable difference on loopback, but 400 readings/s at most to a broker 50 ms away.
    static let ownMessagesInFlight = 16

    /// The longest pause between reconnect attempts. The client's default (30 s) let readings resume
    /// only 19 s after a broker came back from a 30 s outage (issue 19, D13); a probe every 5 s at most
    /// costs a refused TCP connection while the broker is away.
    package static let maximumReconnectDelay: Duration = .seconds(5)

    /// The MQTT 5 Maximum Packet Size the gateway announces on CONNECT (docs/mqtt.md): room for the
    /// 16 KiB command payload, the longest topic and a response topic; the broker drops larger
    /// packets instead of sending them, so a huge publish never reaches the gateway's memory.
    package static let maximumInboundPacketSize: UInt32 = 128 * 1024

    // MARK: Lifecycle

    /// Runs the gateway in the calling task until ``stop()`` (issue 20). The task group of every
    /// task the gateway starts is hosted here, so each is a child of the caller's task; then the
    /// gateway starts (MQTT, retrying in the background while the broker is down, the publisher,
    /// the timers and Bluetooth) and `started` hears how the start ended. Returns once `stop()`
    /// has ended every task (a task that ignores its cancellation past the stop's deadline holds
    /// it: the caller bounds its own wait, as `blebridge run` does). Cancelling the caller's task
    /// cancels the gateway's tasks, then stops the gateway as `stop()` does (in a task of its own,
    /// so that the cancellation does not cut its drain short), and `run` returns after that stop.
    ///
    /// A start that fails is stopped before `started` hears its error: what it had started ends
    /// (connects in flight are undone, the bridge's `offline` is published and the client
    /// disconnects cleanly), so nothing is left to the broker's will or to the process's exit.
    package func run(started: @escaping @Sendable (Result<Void, any Error>) -> Void = { _ in }) async {
        async let hosting: Void = scope.host()
        do {
            try await start()
            started(.success(()))
        } catch {
            await stop()
            started(.failure(error))
        }
        await hosting
        // Ended by the caller's cancellation rather than by a stop: the devices, the broker's
        // connection, the outbox and the notify thread are still open.
        if !stopping { await Task { await self.stop() }.value }
    }

    /// Starts MQTT (retrying in the background while the broker is down), the publisher, the
    /// health timer and Bluetooth. Returns once everything is started. Only ``run(started:)``
    /// calls it: its tasks run in the group that `run` hosts.
    func start() async throws {
        logger.info(
            "starting", [("version", BLEBridgeVersion.string), ("devices", "\(model.configuration.devices.count)")])
        announced = (try? await state.announcedDiscovery()) ?? [:]
        discoverySources = (try? await state.discoverySources()) ?? DiscoverySources()
        instances = MatchInstances(bindings: (try? await state.matchBindings()) ?? [:], loadedAt: clock.date)
        autoDevices = AutoDevices(entries: (try? await state.autoDevices()) ?? [:], loadedAt: clock.date)
        adopted = AdoptedDevices(entries: (try? await state.adoptedDevices()) ?? [:])
        if !instances.bindings.isEmpty || !autoDevices.entries.isEmpty || !adopted.entries.isEmpty {
            await apply(expanded(configured), reason: "match instances, automatic and adopted devices restored")
        }
        let (client, logger) = (client, logger)
        for (lane, messages) in outgoingMessages {
            let task = scope.spawnCancellable { [weak self] in
                let left = await Self.publishOutgoing(messages, lane: lane, client: client, logger: logger)
                await self?.keepLate(left)
            }
            if let task { outgoingTasks.append(task) }
        }
        // The command streams exist before the first CONNACK: with a persistent session the broker
        // sends the commands it queued while the gateway was down right after it, and the client
        // drops a message that matches no stream.
        await subscribeCommands()
        await followGateways()
        await followCandidacies()
        await followDiscoveryConfigs()
        await followPresence()
        // A SIGTERM may have stopped the gateway while the state was read or the streams made: the
        // stop has disconnected the client, and a start going on would connect it again.
        guard !stopping else { return }
        startBridgeLogging()
        try await client.start()
        let states = client.connectionStates
        startLoop { [weak self] in
            for await connectionState in states {
                guard let self else { return }
                await self.connectionChanged(connectionState)
            }
        }
        await publisher.start()
        // Nor timers and Bluetooth once stopped: the stop has cancelled the tasks it knew of, and a
        // link opened now would connect devices nobody disconnects (see BLELink.stop(until:)).
        guard !stopping else { return }
        let readings = pipeline.events
        startLoop { [weak self] in
            for await event in readings {
                guard let self else { return }
                await self.reading(event)
            }
        }
        let announcements = newFieldEvents
        startLoop { [weak self] in
            for await event in announcements {
                guard let self else { return }
                await self.announce(event)
            }
        }
        let clock = self.clock
        startLoop { [weak self] in
            while !Task.isCancelled {
                guard let interval = self?.options.healthInterval else { return }
                // Real delay: the health topic's period (`--health-interval`).
                try? await clock.sleep(for: interval)
                await self?.healthTick()
            }
        }
        // Passive and on-demand devices go offline when they stop advertising (no event marks it).
        startLoop { [weak self] in
            while !Task.isCancelled {
                // Real delay: the availability sweep's period (passive devices go offline on silence, which no event marks).
                try? await clock.sleep(for: Self.availabilitySweep)
                await self?.refreshAvailability()
            }
        }
        // The D-Bus thread the link and each of its bus connections run on, for the gateway's life,
        // and the thread that reads the devices' notification sockets, until the stop.
        let notifyPoller = NotifySocketPoller()
        self.notifyPoller = notifyPoller
        let link = BLELink(
            host: linkHost(), configuration: model.configuration, busAddress: options.busAddress, pipeline: pipeline,
            clock: clock, thread: try BlueZBusThread(), notifyPoller: notifyPoller, scope: scope)
        ble = link
        await link.start()
        // A SIGTERM may have stopped the gateway while Bluetooth was starting.
        guard !stopping else { return }
        if let problem = await link.startPassiveScan() {
            logger.error("cannot scan passively", [("code", problem.code.rawValue), ("error", problem.detail)])
            throw problem
        }
        // Read commands once Bluetooth has started and known peripherals are restored, so a
        // command queued by the broker finds its device.
        readingCommands = true
        readCommandStreams()
    }

    /// SIGTERM: stop taking commands, let in-flight commands and unacknowledged readings finish
    /// (up to `drainTimeout`), publish `offline` (retained) and disconnect cleanly (no will).
    /// The outbox keeps whatever was not acknowledged.
    ///
    /// The bounds here are real time (not ``clock``): a stop must end even when a test's clock
    /// stands still.
    package func stop() async {
        guard !stopping else { return }
        stopping = true
        logger.info("stopping: draining in-flight work")
        // A scan still in its window is answered now with what it has seen so far.
        for task in scanTasks.values { task.cancel() }
        let deadline = ContinuousClock.now + options.drainTimeout
        await Deadline.run(until: deadline) { [weak self] in await self?.commandsFinished() }
        for id in pendingCommands.keys.sorted() { failCommands(id) }
        // Disconnects get at least 3 s even when commands used the drain time up: a connect left
        // in flight at exit connects the device to nobody (see BLELink.stop(until:)).
        await ble?.stop(until: max(deadline, .now + .seconds(3)))
        // Readings are accepted until the devices' links are down and their notify sockets read to
        // the end (BLELink.stop waits for that): a reading a device sent before the disconnect is
        // not lost to the stop (make faults, outbox-deleted: 1 lost when this came first).
        pipeline.stopAccepting()
        // Let the backlog go out while the broker is there, then wait for what is in flight.
        // (Readings offered to the publisher are committed first: both run on the outbox's
        // thread, in order.)
        await publisher.waitUntilDrained(timeout: max(.zero, deadline - ContinuousClock.now))
        await publisher.stop(drainTimeout: max(.milliseconds(100), deadline - ContinuousClock.now))
        for task in tasks { task.cancel() }
        discoveryResend?.cancel()
        recordTimer?.cancel()
        ownershipWakeUp.cancel()
        presenceWakeUp.cancel()
        viaRepairWakeUp.cancel()
        await drainOutgoing(until: deadline)
        // Commands keep arriving until DISCONNECT; their answers now go out directly.
        await publishLateResponses(until: max(deadline, .now + .seconds(1)))
        if client.connectionState.isConnected {
            // Bounded: a broker that stopped answering (frozen, half-open) never acknowledges them.
            // In shared-broker mode, only the devices this gateway speaks for (the others' owners do).
            let offline =
                devices.keys.sorted().filter(speaksFor).map { id in
                    MQTTMessage(
                        topic: model.topics.availability(id), payload: model.availabilityPayload(online: false),
                        qos: .atLeastOnce,
                        retain: true)
                } + [
                    MQTTMessage(
                        topic: model.topics.bridgeState, payload: Self.offlineState(model.configuration),
                        qos: .atLeastOnce, retain: true)
                ]
            _ = await Self.publish(offline, with: client, until: max(deadline, .now + .seconds(1)))
        }
        await publishLateResponses(until: max(deadline, .now + .seconds(1)))
        // DISCONNECT first, then the command streams end (the client ends them): ending a
        // subscription's last stream while connected would UNSUBSCRIBE, and the broker would drop
        // the commands sent while the gateway is down instead of queueing them for the session.
        await client.disconnect()
        // What the client received (and acknowledged) before the DISCONNECT is still answered.
        await finishCommandStreams(until: max(deadline, .now + .seconds(2)))
        await answerOverASecondConnection()
        // Every task the gateway started ends here, or is left behind named in the log.
        if await !scope.close(until: max(deadline, .now + .seconds(1))) {
            logger.warning("stopping: some of the gateway's tasks did not end in time; stopping without them")
        }
        // The link has read its sockets to the end (or its stop's deadline passed): any left close now.
        notifyPoller?.shutdown()
        await store.close()
        statusContinuation.finish()
        controlContinuation.finish()
        stopBridgeLogging()
        logger.info("stopped")
    }

    /// Whether every task the gateway started has ended (true once ``stop()`` returned, unless a
    /// task ignored its cancellation past the stop's deadline, which the stop logs).
    package nonisolated var allTasksEnded: Bool { scope.isClosed }

    /// Starts `work` in the gateway's ``scope`` as one of ``tasks`` (cancelled by `stop` with them);
    /// nothing runs once the stop has closed the scope.
    func startLoop(_ work: @escaping @Sendable () async -> Void) {
        if let task = scope.spawnCancellable(work) { tasks.append(task) }
    }

    /// Lets the queued responses go out (until `deadline`) before the connection closes.
    /// What is still queued at the deadline (a slow broker or gateway) waits in `lateResponses`.
    private func drainOutgoing(until deadline: ContinuousClock.Instant) async {
        for continuation in outgoing.values { continuation.finish() }
        let limit = max(deadline, .now + .milliseconds(500))
        for task in outgoingTasks { await task.finished(cancellingAt: limit) }
    }

    /// What an answer lane had not published when it ended (``drainOutgoing(until:)``).
    private func keepLate(_ left: [MQTTMessage]) {
        lateResponses = left + lateResponses
    }

    /// SIGHUP: applies a new configuration. Devices that did not change keep their connections;
    /// changed devices reconnect with their new settings; removed ones are disconnected and their
    /// Home Assistant entities deleted. Broker, bus and outbox settings need a restart.
    package func reload(_ configuration: BridgeConfiguration) async {
        configured = Self.keepingSharedBroker(of: configured, in: configuration, logger: logger)
        await apply(expanded(configured), reason: "configuration reloaded")
    }

    /// Applies `configuration` (already expanded by ``instances``) as a reload does. `announceAll`:
    /// announce the whole bridge afterwards (a reload); otherwise only what changed (one device
    /// added by itself: announcing everything for each would cost O(devices²) retained messages
    /// to fill the bound).
    /// `leaving`: why devices go, by id, for their `device_left` events (default: "removed from the configuration").
    func apply(
        _ configuration: BridgeConfiguration, reason: String, announceAll: Bool = true, leaving: [String: String] = [:]
    ) async {
        let old = model.configuration
        let diff = GatewayModel.changes(from: old, to: configuration)
        if old.mqtt != configuration.mqtt || old.bluetooth != configuration.bluetooth
            || old.outbox != configuration.outbox || old.presence != configuration.presence
            || old.devices.map(\.txPower) != configuration.devices.map(\.txPower)
        {
            logger.warning("reload: mqtt, bluetooth, outbox, presence and tx_power settings apply only after a restart")
        }
        let newModel = GatewayModel(configuration: configuration)
        model = newModel
        gate.update(policy: newModel.commandPolicy)
        pipeline.withRouter {
            $0.update(devices: newModel.discoveryDevices, discoveryBuilder: newModel.discoveryBuilder)
        }
        await resubscribeHomeAssistantStatus(old: old)
        var actions: [ConnectionScheduler.Action] = []
        if !diff.changed.isEmpty {
            let unchanged = newModel.schedulerSpecs.filter { !diff.changed.contains($0.id) }
            actions += scheduler.handle(.reconfigure(unchanged), at: clock.now)
        }
        actions += scheduler.handle(.reconfigure(newModel.schedulerSpecs), at: clock.now)
        await ownershipEvent(.devices(Self.governedDevices(newModel), passive: Self.passiveDevices(newModel)))
        for id in diff.removed.sorted() {
            publishEvent(
                .left, device: id, [JSONMember("reason", .string(leaving[id] ?? "removed from the configuration"))])
            devices[id] = nil
            await removeDiscovery(of: id)
            try? await state.forget(deviceID: id)
            try? await publishRetained(model.topics.availability(id), [])
        }
        for device in configuration.devices where devices[device.id] == nil || diff.changed.contains(device.id) {
            var status = devices[device.id] ?? DeviceStatus()
            status.address = device.match.address?.string ?? status.address
            devices[device.id] = status
        }
        // Devices already seen stay known to the pool (changed ones were re-added above).
        for device in configuration.devices where devices[device.id]?.lastSeen != nil {
            actions += scheduler.handle(.discovered(device.id), at: clock.now)
        }
        // Only the lists that have members (no `changed=""`).
        let lists = [("changed", diff.changed), ("removed", diff.removed), ("added", diff.added)]
        logger.info(
            reason, lists.filter { !$0.1.isEmpty }.map { ($0.0, $0.1.sorted().joined(separator: ",")) })
        await perform(actions)
        await ble?.update(configuration: configuration)
        updateStatus()
        guard client.connectionState.isConnected else { return }
        if announceAll {
            await announceBridge()
        } else {
            await announceDevices(diff.added.union(diff.changed))
        }
    }

    /// For the systemd watchdog: answers as long as the actor is not stuck and not stopping. It is
    /// not gated on Bluetooth: a restart cannot bring back bluetoothd, an adapter or the bus, and the
    /// gateway retries by itself; the Bluetooth state goes to `STATUS=`, `bridge/health` and
    /// Home Assistant instead (docs/deploy.md, "Health").
    package func isHealthy() -> Bool { !stopping }

    // MARK: MQTT connection

    func connectionChanged(_ connectionState: MQTTConnectionState) async {
        switch connectionState {
        case .connected:
            brokerConnectionBegan()
            logger.info("broker connected")
            // A burst: the outbox's backlog is read and published (``FreeMemorySchedule``).
            freeMemory.burst(at: clock.now)
            updateStatus { $0.broker = .connected }
            // Candidacies first: they replace what an earlier run left retained before the record
            // says online (same queue, so in that order on the broker).
            await ownershipEvent(.broker(connected: true))
            await presenceEvent(.broker(connected: true))
            await subscribeCommands()
            await announceBridge()
        case .disconnected(_?):
            // Once per outage (the MQTT client logs each attempt, with its reason and retry delay).
            if serviceStatus.broker == .connected { logger.notice("broker away; readings are kept in the outbox") }
            updateStatus { $0.broker = .disconnected }
            await ownershipEvent(.broker(connected: false))
            await presenceEvent(.broker(connected: false))
        case .disconnected(nil):
            updateStatus { $0.broker = .disconnected }
            await ownershipEvent(.broker(connected: false))
            await presenceEvent(.broker(connected: false))
        case .connecting:
            // A retry after a loss stays "unreachable, retrying" until it succeeds.
            if serviceStatus.broker != .disconnected { updateStatus { $0.broker = .connecting } }
        }
        await refreshOutboxStatus()
    }

    /// The filters the gateway subscribes: commands, with Home Assistant's status topic when discovery is on.
    static func subscribedFilters(_ model: GatewayModel) -> [String] {
        var filters = model.topics.commandFilters
        if model.configuration.homeAssistant.enabled { filters.append(model.topics.homeAssistantStatus) }
        return filters
    }

    /// Subscribes to the command filters not subscribed yet (a refused one is retried at the next
    /// connection). Reached before the client starts, on `connected`, and on a reload that turns
    /// Home Assistant on (or moves its status topic). The command filters' streams never end
    /// while the gateway runs.
    func subscribeCommands() async {
        for filter in Self.subscribedFilters(model) where !commandFilters.contains(filter) {
            commandFilters.insert(filter)
            do {
                unreadCommandStreams[filter] = try await client.subscribe(
                    filter, qos: .atLeastOnce, retainedAtSubscribe: filter == model.topics.homeAssistantStatus)
            } catch {
                commandFilters.remove(filter)
                logger.error(
                    "could not subscribe to a command topic; retrying at the next connection",
                    [("filter", filter), ("error", "\(error)")])
            }
        }
        if readingCommands { readCommandStreams() }
    }

    func readCommandStreams() {
        for (filter, stream) in unreadCommandStreams {
            commandTasks[filter] = scope.spawnCancellable { [weak self] in
                for await message in stream {
                    guard let self else { return }
                    await self.received(message)
                }
            }
        }
        unreadCommandStreams = [:]
    }

    /// A reload turned Home Assistant on or off, or moved its status topic: ends the old status
    /// subscription (its last stream ending unsubscribes) and subscribes the new one at once, so
    /// Home Assistant's `online` is heard without waiting for the next broker connection.
    func resubscribeHomeAssistantStatus(old: BridgeConfiguration) async {
        let previous = GatewayModel(configuration: old)
        let kept = Set(Self.subscribedFilters(model))
        for filter in Self.subscribedFilters(previous) where !kept.contains(filter) && commandFilters.contains(filter) {
            commandFilters.remove(filter)
            commandTasks.removeValue(forKey: filter)?.cancel()
            if let unread = unreadCommandStreams.removeValue(forKey: filter) {
                Task { for await _ in unread {} }.cancel()  // ending the iteration ends the stream
            }
            logger.info("unsubscribed", [("filter", filter)])
        }
        await subscribeCommands()
    }
}
