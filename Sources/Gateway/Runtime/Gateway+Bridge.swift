import Bluetooth
import Foundation
import Logging
import MQTT
import Publisher
import TaskScope
import Timekeeping

/// The `bridge/…` topics, availability and Home Assistant discovery.
extension Gateway {
    func publishRetained(_ topic: String, _ payload: [UInt8]) async throws {
        try await client.publish(MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce, retain: true))
    }

    /// Queues a response, event or health message in `lane` for
    /// ``publishOutgoing(_:lane:client:logger:)``, which publishes each lane in order. Never
    /// waits: a slow broker holds up only the queue; a full lane drops the message (logged at
    /// most once a minute with the number not logged).
    /// Once the queue has closed (shutdown), the message waits in `lateResponses` for `stop`.
    func send(_ message: MQTTMessage, lane: AnswerLane = .bridge) {
        switch outgoing[lane]?.yield(message) {
        case .dropped:
            if let held = droppedAnswerLog.admit(at: clock.now) {
                logger.warning(
                    "answer queue full (\(lane.capacity) waiting); not sent",
                    [("topic", message.topic), ("not_logged_since_last", "\(held)")])
            }
        case .terminated:
            lateResponses.append(message)
        case .enqueued, nil:
            break
        @unknown default:
            break
        }
    }

    /// The task that publishes one lane's messages: handed to the client in the order they were
    /// decided (the broker keeps the order of one connection's QoS 1 publishes), up to
    /// ``AnswerLane/window`` of them awaiting their PUBACK at once, so answers are not limited to
    /// one per round trip. A failure (broker gone, refused) is logged at warning with the topic.
    /// Ends when the lane is finished and every publish resolved, or when cancelled (the stop's
    /// deadline); returns the messages not handed to the client by then, which the stop publishes
    /// with the late answers instead of dropping them.
    static func publishOutgoing(
        _ messages: AsyncStream<MQTTMessage>, lane: AnswerLane, client: MQTTClient, logger: Logger
    ) async -> [MQTTMessage] {
        let slots = PublishSlots(AnswerLane.window)
        var iterator = messages.makeAsyncIterator()
        while let message = await iterator.next() {
            guard await slots.acquire() else {
                // Cancelled: the stream still yields what it buffered (it ends once that is read).
                var left = [message]
                while let queued = await iterator.next() { left.append(queued) }
                return left
            }
            do {
                try client.publish(message) { outcome in
                    slots.release()
                    if case .failure(let error) = outcome {
                        logger.warning("response not published", [("topic", message.topic), ("error", "\(error)")])
                    }
                }
            } catch {
                slots.release()
                logger.warning("response not published", [("topic", message.topic), ("error", "\(error)")])
            }
        }
        await slots.drain()
        return []
    }

    /// A new connection to the broker: what was published on the last one is sent again (a
    /// restarted broker may have lost it). Called as the connection is reported, before any await:
    /// a device seen while the gateway subscribes then publishes `bridge/devices` once, and the
    /// announcement after it does not repeat it. (Resetting in ``announceBridge()`` did: two
    /// identical retained lists in a row, `HomeAssistantControlTests` under load, 2026-12-05.)
    func brokerConnectionBegan() {
        publishedDevices = nil
    }

    /// After every (re)connection: state online, info, devices, availability, discovery.
    func announceBridge() async {
        let topics = model.topics
        do {
            if topics.gatewayRecord != nil {
                recordSchedule.reset()
                refreshGatewayRecord()
            } else {
                try await publishRetained(topics.bridgeState, BridgePayloads.online.bytes)
            }
            flushPendingEvents()
            let info = model.bridgeInfo(startedAt: startedAt).json.bytes
            try await publishRetained(topics.bridgeInfo, info)
            publishedInfo = info
            // Sent unless this connection has it already (``brokerConnectionBegan()``).
            try await publishDevices()
            for id in devices.keys.sorted() {
                devices[id]?.availability = nil
                await publishAvailability(id)
            }
            await publishDiscovery()
        } catch {
            logger.warning("announcing the bridge failed; will retry at the next connection", [("error", "\(error)")])
        }
    }

    /// After one device was added by itself (or a few changed): `bridge/info` and `bridge/devices`
    /// (each sent only when it changed), and the availability and control entities of `ids` alone.
    /// The entities of removed devices were deleted by `apply`; a device not seen yet gets its
    /// availability from ``deviceSeen(_:address:rssi:)`` and its field entities with its first reading.
    func announceDevices(_ ids: Set<String>) async {
        do {
            let info = model.bridgeInfo(startedAt: startedAt).json.bytes
            if info != publishedInfo {
                // Recorded before the publish, as in ``publishDevices()``.
                publishedInfo = info
                do { try await publishRetained(model.topics.bridgeInfo, info) } catch {
                    if publishedInfo == info { publishedInfo = nil }
                    throw error
                }
            }
            try await publishDevices()
        } catch {
            logger.warning("announcing a device failed", [("error", "\(error)")])
        }
        for id in ids.sorted() where devices[id]?.lastSeen != nil { await publishAvailability(id) }
        guard model.discoveryBuilder != nil else { return }
        let controls = model.controlDiscovery
        await publish(discovery: ids.sorted().flatMap { controls[$0] ?? [] })
    }

    /// `bridge/devices` (retained) with the fields that change only when a device is found,
    /// connects, disconnects or is reconfigured; published only when it changed (RSSI and last
    /// seen change all the time: they are in the answer of `bridge/request/devices` and in each
    /// device's state).
    ///
    /// The payload is recorded before the publish: the actor runs other calls while it awaits the
    /// PUBACK, and one that found the same payload not recorded yet published it a second time
    /// (two identical retained messages in a row, seen under load). A failed publish forgets it,
    /// so the next call sends it again.
    func publishDevices() async throws {
        let payload = DeviceSummary.list(deviceSummaries(), stable: true).bytes
        guard payload != publishedDevices else { return }
        publishedDevices = payload
        do { try await publishRetained(model.topics.bridgeDevices, payload) } catch {
            if publishedDevices == payload { publishedDevices = nil }
            throw error
        }
    }

    /// Every followed device as `bridge/devices` and `bridge/request/devices` list it.
    func deviceSummaries() -> [DeviceSummary] {
        model.configuration.devices.map { device in
            let status = devices[device.id] ?? DeviceStatus()
            let origin: DeviceSummary.Origin =
                autoDevices.entries[device.id] != nil
                ? .automatic : adopted.entries[device.id] != nil ? .adopted : .configured
            return DeviceSummary(
                id: device.id, name: device.name, origin: origin, address: status.address,
                connection: device.connection.rawValue, connected: status.connected, rssi: status.rssi,
                lastSeen: status.lastSeen, services: status.services)
        }
    }

    func isAvailable(_ id: String) -> Bool {
        guard let device = model.configuration.device(id: id), let status = devices[id] else { return false }
        if device.connection == .passive {
            guard let lastSeen = status.lastSeen else { return false }
            return clock.date.timeIntervalSince(lastSeen) < model.configuration.bluetooth.scan.deviceTTL.inSeconds
        }
        if device.connection == .connectOnDemand, let lastSeen = status.lastSeen {
            // On-demand devices are disconnected most of the time; they are available while seen.
            return status.connected
                || clock.date.timeIntervalSince(lastSeen) < model.configuration.bluetooth.scan.deviceTTL.inSeconds
        }
        return status.connected
    }

    /// Publishes `<device>/availability` when it changed (and recounts `STATUS=`'s devices then;
    /// this runs on every advertisement of a configured device, and a recount visits them all).
    func publishAvailability(_ id: String) async {
        // Shared-broker mode: the device's owner publishes it (with none, the speaker), not every gateway.
        guard speaksFor(id) else {
            devices[id]?.availability = nil
            return
        }
        let online = isAvailable(id)
        let value = online ? "online" : "offline"
        guard devices[id] != nil, devices[id]?.availability != value else { return }
        updateStatus()
        devices[id]?.availability = value
        guard client.connectionState.isConnected else {
            devices[id]?.availability = nil
            return
        }
        do {
            try await publishRetained(model.topics.availability(id), model.availabilityPayload(online: online))
        } catch {
            devices[id]?.availability = nil
        }
    }

    func refreshAvailability() async {
        for id in devices.keys.sorted() { await publishAvailability(id) }
        await ble?.pruneSeen()
        if freeMemory.releaseDue(at: clock.now) { options.releaseFreeMemory() }
    }

    /// Every discovery message: bridge entities, controls, fields seen so far. Remembers the
    /// topics per device so entities of removed devices can be deleted later. In shared-broker
    /// mode a device's entities are announced, and their stale topics deleted, only by its owner
    /// (``announcesDiscovery(of:)``).
    func publishDiscovery() async {
        guard let builder = model.discoveryBuilder else { return }
        var messages = builder.bridgeEntities()
        for (_, controls) in model.controlDiscovery.sorted(by: { $0.key < $1.key }) { messages += controls }
        // Fields only characteristics no longer read produced: the router forgets them (so they
        // are not announced again), then their entities are deleted.
        let dropped = discoverySources.droppedTopics(
            announced: announced, configuration: model.configuration, live: Set(messages.map(\.topic))
        ).filter { announcesDiscovery(of: $0.key) }
        if !dropped.isEmpty {
            let topics = Set(dropped.values.joined())
            pipeline.withRouter { $0.forget(discoveryTopics: topics) }
        }
        messages += pipeline.withRouter { $0.allDiscovery() }
        noteDiscoveryVoice()
        await publish(discovery: messages)
        for (id, topics) in dropped.sorted(by: { $0.key < $1.key }) {
            await removeDiscovery(topics, of: id, reason: "of characteristics no longer read")
        }
        // Devices announced earlier (possibly by a previous run) but no longer configured.
        for id in announced.keys.sorted() where model.configuration.device(id: id) == nil {
            await removeDiscovery(of: id)
        }
        // Shared-broker mode: entities this gateway announced under its single-gateway ids (before
        // the mode was turned on), deleted so Home Assistant keeps no duplicate device.
        let single = builder.singleGatewayTopics(announced, devices: model.configuration.devices.map(\.id))
        for (id, topics) in single.sorted(by: { $0.key < $1.key }) {
            await removeDiscovery(topics, of: id, reason: "under the single-gateway ids (mqtt.shared_broker on)")
        }
        // Entities of configured devices announced under a field name no longer used.
        var services: [String: [BluetoothUUID]] = [:]
        for known in (try? await state.knownPeripherals()) ?? [] {
            services[known.deviceID] = known.services.compactMap { BluetoothUUID($0) }
        }
        let stale = StaleDiscovery.topics(
            announced: announced, configuration: model.configuration, live: Set(messages.map(\.topic)),
            resolvedServices: services)
        for (id, topics) in stale.sorted(by: { $0.key < $1.key }) where announcesDiscovery(of: id) {
            await removeDiscovery(topics, of: id, reason: "under field names no longer used")
        }
    }

    /// Deletes some entities of a configured device; a topic is forgotten only once its empty
    /// retained payload was published (otherwise it is tried again with the next discovery).
    func removeDiscovery(_ topics: [String], of id: String, reason: String) async {
        var removed: Set<String> = []
        for topic in topics {
            do {
                try await publishRetained(topic, [])
                removed.insert(topic)
            } catch {
                logger.warning(
                    "removing a Home Assistant entity failed", [("topic", topic), ("error", "\(error)")])
            }
        }
        guard !removed.isEmpty else { return }
        announced[id]?.removeAll { removed.contains($0) }
        try? await state.setAnnouncedDiscovery(announced[id] ?? [], deviceID: id)
        if discoverySources.forget(removed, device: id) {
            try? await state.setDiscoverySources(discoverySources, deviceID: id)
        }
        logger.info(
            "removed Home Assistant entities \(reason)",
            [("device", id), ("topics", removed.sorted().joined(separator: ","))])
    }

    /// Publishes discovery messages (retained) and remembers each device's topics. A device's
    /// message goes out only while this gateway announces the device (shared-broker mode: owns it;
    /// checked at each message, as ownership may move while the batch waits for the broker).
    func publish(discovery messages: [DiscoveryMessage]) async {
        guard !messages.isEmpty else { return }
        var changed: Set<String> = []
        for message in messages {
            if let id = message.device, !announcesDiscovery(of: id) { continue }
            do {
                try await publishRetained(message.topic, message.payload)
            } catch {
                logger.warning("discovery publish failed", [("topic", message.topic), ("error", "\(error)")])
                continue
            }
            guard let id = message.device else { continue }
            if !(announced[id] ?? []).contains(message.topic) {
                announced[id, default: []].append(message.topic)
                changed.insert(id)
            }
        }
        for id in changed.sorted() {
            try? await state.setAnnouncedDiscovery(announced[id] ?? [], deviceID: id)
        }
    }

    /// Remembers what produced new field entities (nil `source`: an advertisement).
    func recordSources(of messages: [DiscoveryMessage], device id: String, source: String?) async {
        guard discoverySources.record(messages.map(\.topic), device: id, source: source) else { return }
        try? await state.setDiscoverySources(discoverySources, deviceID: id)
    }

    /// Deletes the entities of a device no longer configured. In shared-broker mode the topics
    /// under the shared ids are only forgotten: another gateway may still have the device (and
    /// own it), and a gateway never deletes what another one announces.
    func removeDiscovery(of id: String) async {
        guard let topics = announced[id], !topics.isEmpty else { return }
        let shared = sharedNodeID(id)
        let own = topics.filter { shared == nil || DiscoveryBuilder.nodeID(ofTopic: $0) != shared }
        if own.count < topics.count {
            announced[id] = own
            try? await state.setAnnouncedDiscovery(own, deviceID: id)
        }
        if !own.isEmpty { await removeDiscovery(own, of: id, reason: "of a device no longer configured") }
        // A topic whose removal failed stays announced and is tried again with the next discovery.
        guard announced[id]?.isEmpty ?? true else { return }
        announced[id] = nil
        discoverySources.forget(device: id)
        try? await state.forget(deviceID: id)
    }

    /// Home Assistant came online: discovery again, a few seconds later (HA ignores it while starting).
    func homeAssistantStatus(_ payload: [UInt8]) {
        guard String(decoding: payload, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "online"
        else { return }
        discoveryResend?.cancel()
        let delay = options.discoveryDelay
        // Home Assistant's discovery is re-sent this long after it announced itself online.
        // Home Assistant ignores discovery while it starts.
        discoveryResend = scope.spawnTimer(at: clock.now + delay, clock: clock) { [weak self] in
            await self?.publishDiscovery()
        }
    }

    /// Publishes `bridge/health` (while connected) with the outbox figures `stats` (read by the caller).
    func publishHealth(_ stats: PublisherStats?) async {
        guard client.connectionState.isConnected else { return }
        let snapshot = HealthSnapshot(
            uptime: clock.now - startInstant, connections: scheduler.connectedDevices.count,
            maxConnections: model.configuration.bluetooth.maxConnections, outboxDepth: stats?.depth ?? 0,
            oldestUnsentAge: stats?.oldestUnsentAge(now: clock.date), dropped: Int(stats?.dropped ?? 0),
            reconnects: counters.reconnects, published: stats?.published ?? 0, commands: counters.commands,
            commandsRefused: counters.commandsRefused, time: clock.date,
            outboxError: stats?.storeError.map { HealthSnapshot.outboxErrorName($0.code.rawValue) },
            bluetooth: bluetooth,
            autoDevices: configured.autoDevices.enabled
                ? HealthSnapshot.AutoDeviceCounts(
                    devices: autoDevices.entries.count, evictions: autoDevices.evictions,
                    refusals: autoDevices.refusals) : nil,
            matchInstances: configured.devices.contains { $0.match.address == nil }
                ? HealthSnapshot.AutoDeviceCounts(
                    devices: instances.count, evictions: instances.evictions, refusals: instances.refusals) : nil,
            gateways: model.topics.gatewayRecord != nil ? peers.json : nil)
        send(MQTTMessage(topic: model.topics.bridgeHealth, payload: snapshot.json.bytes, qos: .atMostOnce))
    }
}
