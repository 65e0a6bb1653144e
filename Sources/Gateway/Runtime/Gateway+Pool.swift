import Decoders
import Foundation
import Outbox

/// Performs the connection pool's actions and feeds it Bluetooth events.
extension Gateway {
    func perform(_ actions: [ConnectionScheduler.Action]) async {
        for action in actions {
            switch action {
            case .connect(let id):
                logger.debug("pool: connect", [("device", id)])
                await ble?.connect(id)
            case .disconnect(let id, let reason):
                logger.debug("pool: disconnect", [("device", id), ("reason", reason.rawValue)])
                await ble?.disconnect(id)
            case .poll(let id):
                await ble?.poll(id)
            case .runCommands(let id):
                Task { await self.runCommands(id) }
            case .failCommands(let id):
                failCommands(id)
            case .pauseDiscovery:
                await ble?.setDiscoveryPaused(true)
            case .resumeDiscovery:
                await ble?.setDiscoveryPaused(false)
            }
        }
        rescheduleWake()
    }

    /// One timer, set to the scheduler's next deadline.
    func rescheduleWake() {
        wake?.cancel()
        guard !stopping, let deadline = scheduler.nextDeadline() else { return }
        wake = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled, let self else { return }
            await self.poolEvent(.tick)
        }
    }

    func poolEvent(_ event: ConnectionScheduler.Event) async {
        await perform(scheduler.handle(event, at: .now))
    }

    // MARK: Events from Bluetooth

    /// A configured device was seen advertising (or restored from the state database).
    func deviceSeen(_ id: String, address: String, rssi: Int?) async {
        guard devices[id] != nil else { return }
        let first = devices[id]?.lastSeen == nil
        devices[id]?.address = address
        devices[id]?.lastSeen = Date()
        if let rssi { devices[id]?.rssi = rssi }
        router.setAddress(address, for: id)
        if first { await poolEvent(.discovered(id)) }
        await publishAvailability(id)
    }

    func deviceConnected(_ id: String, services: [String]) async {
        devices[id]?.connected = true
        devices[id]?.lastSeen = Date()
        devices[id]?.services = services
        logger.info("device connected and subscribed", [("device", id)])
        await poolEvent(.connected(id))
        await publishAvailability(id)
        try? await publishDevices()
    }

    func deviceConnectFailed(_ id: String, error: String) async {
        logger.notice("connect failed", [("device", id), ("error", error)])
        await poolEvent(.connectFailed(id))
    }

    func deviceDisconnected(_ id: String, expected: Bool) async {
        let wasConnected = devices[id]?.connected ?? false
        devices[id]?.connected = false
        if wasConnected, !expected {
            counters.reconnects += 1
            logger.notice("device disconnected; reconnecting", [("device", id)])
        }
        await poolEvent(.disconnected(id))
        await publishAvailability(id)
        if wasConnected { try? await publishDevices() }
    }

    func adapterPowered(_ powered: Bool) async {
        logger.notice(powered ? "adapter powered on" : "adapter not available", [])
        if !powered {
            for id in devices.keys where devices[id]?.connected == true { devices[id]?.connected = false }
        }
        await poolEvent(.adapterPowered(powered))
        for id in devices.keys.sorted() { await publishAvailability(id) }
    }

    /// A notification, read or advertisement decoded into fields, stamped when it arrived;
    /// `fromConnection` (a notification or read, not an advertisement) also keeps the silence
    /// watchdog quiet, in the same actor hop.
    func reading(
        device id: String, fields: [DecodedField], raw: (characteristic: String, bytes: [UInt8])?, rssi: Int?,
        sampleTime: Date, fromConnection: Bool = false
    ) async {
        if fromConnection { activity(id) }
        guard devices[id] != nil, !stopping else { return }
        devices[id]?.lastSeen = sampleTime
        if let rssi { devices[id]?.rssi = rssi }
        let output = router.route(device: id, fields: fields, raw: raw, rssi: rssi, sampleTime: sampleTime)
        await enqueue(output.entries)
        if !output.discovery.isEmpty, client.connectionState.isConnected {
            await publish(discovery: output.discovery)
        }
    }

    /// Readings wait here only until the flusher commits them to the outbox: one transaction
    /// for whatever arrived meanwhile (group commit under load), in arrival order. The reading
    /// that finds no flush running commits inline (no task per lone reading); what arrives
    /// during that commit is left to a flush task, so no caller waits for more than one round.
    func enqueue(_ entries: [OutboxEntry]) async {
        pendingEntries += entries
        guard !flushing else { return }
        flushing = true
        await commitPendingRound()
        if pendingEntries.isEmpty {
            flushing = false
        } else {
            Task { await self.flushPending() }
        }
    }

    private func commitPendingRound() async {
        let batch = pendingEntries
        pendingEntries = []
        do {
            try await publisher.submit(batch)
        } catch {
            logger.error(
                "outbox append failed; readings lost", [("count", "\(batch.count)"), ("error", "\(error)")])
        }
    }

    func flushPending() async {
        while !pendingEntries.isEmpty { await commitPendingRound() }
        flushing = false
    }

    /// Notifications keep the silence watchdog quiet.
    func activity(_ id: String) {
        _ = scheduler.handle(.activity(id), at: .now)
    }
}
