import Decoders
import Foundation
import Outbox
import TaskScope
import Timekeeping

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
                // Shared-broker mode: the device lost goes to the best standby.
                if reason == .silent { await ownershipEvent(.lost(id)) }
            case .poll(let id):
                await ble?.poll(id)
            case .runCommands(let id):
                scope.spawn { await self.runCommands(id) }
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
        // The pool scheduler's next deadline (a rotation slot, a reconnect backoff).
        wake = scope.spawnTimer(at: deadline, clock: clock) { [weak self] in await self?.poolEvent(.tick) }
    }

    func poolEvent(_ event: ConnectionScheduler.Event) async {
        await perform(scheduler.handle(event, at: clock.now))
    }

    // MARK: Events from Bluetooth

    /// A configured device was seen advertising (or restored from the state database).
    /// A configured device advertised (or was restored, `rssi` nil). Returns whether this gateway
    /// publishes its advertisement readings (shared-broker mode: only the passive device's owner).
    @discardableResult
    func deviceSeen(_ id: String, address: String, rssi: Int?, persistent: Bool = false) async -> Bool {
        guard devices[id] != nil else { return publishesReadings(of: id) }
        let first = devices[id]?.lastSeen == nil
        devices[id]?.address = address
        let now = clock.date
        devices[id]?.lastSeen = now
        autoDevices.seen(id, at: now)
        instances.seen(id, at: now)
        // Restored (BlueZ kept the object from an earlier connection), paired or trusted: the
        // object stays when the device goes, so it does not keep a candidacy.
        if rssi == nil || persistent { await ownershipEvent(.persistent(id)) }
        if let rssi {
            devices[id]?.rssi = rssi
            await ownershipEvent(.heard(id, rssi: rssi))
        }
        let publishes = publishesReadings(of: id)
        pipeline.withRouter { $0.setAddress(address, for: id) }
        let again = unseenByBlueZ.remove(id) != nil
        if first || again { await poolEvent(.discovered(id)) }
        // Shared-broker mode: a device restored from the state database (rssi nil, at start) may
        // still be linked by BlueZ for an earlier run of this gateway (a crash): it is let go until
        // the election gives it to this gateway, so the owner can have it.
        if rssi == nil, ownership?.governs(id) == true, ownership?.isPassive(id) != true, !scheduler.isOwned(id) {
            logger.info("letting go of a link an earlier run left", [("device", id)])
            await ble?.disconnect(id)
        }
        await publishAvailability(id)
        guard first else { return publishes }
        await deviceJoined(id, address: address)
        // A match without an address learnt it now: `bridge/devices` lists it (sent only when it changed).
        if client.connectionState.isConnected { try? await publishDevices() }
        return publishes
    }

    func deviceConnected(_ id: String, services: [String]) async {
        devices[id]?.connected = true
        devices[id]?.lastSeen = clock.date
        devices[id]?.services = services
        logger.info("device connected and subscribed", [("device", id)])
        updateStatus()
        await poolEvent(.connected(id))
        await ownershipLinked(id, true)
        await presenceEvent(.holding(id, true))
        await publishAvailability(id)
        try? await publishDevices()
    }

    /// BlueZ had no object for the device when its connect was due (after a bluetoothd restart, before
    /// discovery reported it again): connected as soon as it is seen, with no backoff.
    func deviceUnseen(_ id: String) async {
        logger.info("device not known to BlueZ; connecting when it is seen again", [("device", id)])
        unseenByBlueZ.insert(id)
        await poolEvent(.unseen(id))
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
        if wasConnected { updateStatus() }
        await poolEvent(.disconnected(id))
        await ownershipLinked(id, false)
        await presenceEvent(.holding(id, false))
        await publishAvailability(id)
        if wasConnected { try? await publishDevices() }
    }

    func adapterPowered(_ powered: Bool) async {
        logger.notice(powered ? "adapter powered on" : "adapter not available", [])
        if !powered {
            for id in devices.keys.sorted() where devices[id]?.connected == true {
                devices[id]?.connected = false
                await presenceEvent(.holding(id, false))
            }
            updateStatus()
        }
        await poolEvent(.adapterPowered(powered))
        for id in devices.keys.sorted() { await publishAvailability(id) }
    }

    /// What the reading pipeline reports about a device's readings (at once for advertisements and
    /// new fields, else at most every ``ReadingPipeline/reportInterval``): it is alive (keeps the
    /// silence watchdog quiet when the reading came over a connection), its RSSI, and discovery for
    /// fields seen for the first time, which goes to ``announce(_:)``.
    ///
    /// Never waits: it used to await the discovery publish, and a publish waiting for the broker's
    /// PUBACK (a broker gone or frozen just then) held up every later report, so a device that kept
    /// notifying looked silent and its watchdog reconnected it (a reading lost in the reconnect).
    func reading(_ event: ReadingPipeline.Event) {
        if event.fromConnection { activity(event.device) }
        guard devices[event.device] != nil, !stopping else { return }
        devices[event.device]?.lastSeen = event.sampleTime
        if let rssi = event.rssi { devices[event.device]?.rssi = rssi }
        if !event.discovery.isEmpty { newFields.yield(event) }
    }

    /// Records what produced new fields and announces them while connected, in the order they
    /// were seen (the one task reading ``newFields`` calls it). A device removed (by a reload) since
    /// its reading is skipped: the queue may have waited behind a publish the broker did not
    /// acknowledge, and an entity announced now would be retained with nobody to remove it.
    func announce(_ event: ReadingPipeline.Event) async {
        guard !stopping, devices[event.device] != nil else { return }
        await recordSources(of: event.discovery, device: event.device, source: event.source)
        if client.connectionState.isConnected { await publish(discovery: event.discovery) }
    }

    /// A device reported its manufacturer, model or firmware (Device Information service): its
    /// entities are announced again with them in the `device` block.
    func deviceDescribed(_ id: String, manufacturer: String?, model: String?, firmware: String?) async {
        let messages = pipeline.withRouter {
            $0.describe(id, manufacturer: manufacturer, model: model, firmware: firmware)
        }
        logger.info(
            "device information read",
            [
                ("device", id), ("manufacturer", manufacturer ?? "-"), ("model", model ?? "-"),
                ("firmware", firmware ?? "-"),
            ])
        if !messages.isEmpty, client.connectionState.isConnected { await publish(discovery: messages) }
    }

    /// Notifications keep the silence watchdog quiet.
    func activity(_ id: String) {
        _ = scheduler.handle(.activity(id), at: clock.now)
    }
}
