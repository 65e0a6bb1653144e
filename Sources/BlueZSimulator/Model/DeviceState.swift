import Bluetooth

/// One remote device as bluetoothd tracks it: visibility on the bus, connection, pairing, GATT.
///
/// Pure state machine (rules of `src/device.c` 5.66): methods return ``Effect``s and, for
/// connections, a ``ConnectPlan`` whose timers the caller runs.
package struct DeviceState: Sendable {
    /// What a change means on the bus.
    package enum Effect: Sendable, Equatable {
        /// The `Device1` object appears (InterfacesAdded).
        case added
        /// The device object and its GATT objects go (InterfacesRemoved).
        case removed
        /// `Device1` properties changed (PropertiesChanged with their new values).
        case changed([String])
        /// `Device1` properties disappeared (PropertiesChanged invalidated).
        case invalidated([String])
        /// The resolved GATT tree appears (InterfacesAdded per service, characteristic, descriptor).
        case gattAdded
        /// `GattCharacteristic1` properties of one characteristic changed.
        case characteristicChanged(GattDatabase.CharacteristicID, [String])
        /// An AcquireNotify/AcquireWrite socket of this characteristic must be closed (HUP to the client).
        case closeSocket(GattDatabase.CharacteristicID, notify: Bool)
    }

    /// Where the connection is.
    package enum Link: Sendable, Equatable {
        case disconnected
        /// A connect attempt is pending; it ends as planned unless Disconnect cancels it.
        case connecting
        case connected
        /// Disconnect was requested; the link goes down after bluetoothd's 2 s disconnect timer.
        case disconnecting
    }

    /// How the caller runs a `Connect`.
    package enum ConnectPlan: Sendable, Equatable {
        /// Reply at once (nil: success).
        case reply(BlueZError?)
        /// After `delay`, call ``connectionEstablished(at:)`` (then ``resolveServices()``), or fail with the error.
        case pending(delay: Duration, failure: BlueZError?)
        /// After `delay` the link comes up (`Connected` true) and is aborted at once: Connect fails with
        /// `le-connection-abort-by-local` and `Connected` goes false again, as bluetoothd reports it.
        case linkUpThenAbort(delay: Duration)
    }

    /// Mutable only through the control API (``BlueZSimulator/setRSSI(address:_:)``).
    package internal(set) var spec: ScenarioDevice
    package let gatt: GattDatabase
    package let path: String
    package private(set) var characteristics: [GattDatabase.CharacteristicID: CharacteristicState]
    /// `Modalias`, from the peer's Device Information PnP ID once services resolved (nil before).
    package internal(set) var modalias: String?

    package private(set) var exported = false
    /// Found by discovery and never connected, paired or trusted: removed when stale.
    package private(set) var temporary = true
    package private(set) var lastSeen: ContinuousClock.Instant?
    /// `RSSI` and `TxPower` exist only while discovery reports the device.
    package private(set) var rssi: Int16?
    package private(set) var txPowerVisible = false
    package private(set) var manufacturerData: [UInt16: [UInt8]] = [:]
    package private(set) var serviceData: [BluetoothUUID: [UInt8]] = [:]
    package var inRange: Bool

    package private(set) var link: Link = .disconnected
    package private(set) var servicesResolved = false
    package private(set) var gattExported = false
    package private(set) var paired = false
    package private(set) var trusted = false
    package private(set) var blocked = false
    package private(set) var alias: String?
    package private(set) var bonding = false
    /// Services bluetoothd's cached copy of the peer's database lacks (``makeCacheStale(dropping:)``): their
    /// objects are not exported, and reconnecting does not bring them back while the cache stays.
    package private(set) var staleServices: Set<BluetoothUUID> = []
    package private(set) var connectedAt: ContinuousClock.Instant?

    /// Connect failures still to happen (scenario faults and injected ones), in order.
    package private(set) var pendingFailures: [ConnectFailureKind]
    /// The link being made carries a `resolve_stall` fault.
    private var resolveStalls = false

    package init(spec: ScenarioDevice, adapterPath: String) {
        self.spec = spec
        self.gatt = GattDatabase(services: spec.services)
        self.path = adapterPath + "/" + spec.address.bluezPathComponent
        self.inRange = spec.inRange
        self.pendingFailures = spec.faults.connectFailures.flatMap { Array(repeating: $0.failure, count: $0.count) }
        var characteristics: [GattDatabase.CharacteristicID: CharacteristicState] = [:]
        for (id, characteristic) in gatt.allCharacteristics {
            characteristics[id] = CharacteristicState(definition: characteristic)
        }
        self.characteristics = characteristics
    }

    package var address: BluetoothAddress { spec.address }
    package var connected: Bool { link == .connected || link == .disconnecting }
    package var bonded: Bool { paired }

    /// `Device1.UUIDs`: advertised service UUIDs until resolution, then every remote service.
    package var uuids: [String] {
        gattExported ? gatt.uuidStrings : Set(spec.advertisement.serviceUUIDs.map(\.uuidString)).sorted()
    }

    package func linkState(mtu: UInt16) -> CharacteristicState.Link {
        CharacteristicState.Link(connected: link == .connected && servicesResolved, paired: paired, mtu: mtu)
    }

    // MARK: Discovery

    /// An advertisement was received while discovering.
    package mutating func advertisementSeen(
        at now: ContinuousClock.Instant, rssi newRSSI: Int16, manufacturerData newManufacturer: [UInt16: [UInt8]],
        serviceData newService: [BluetoothUUID: [UInt8]], rssiDeltaThreshold: Bool, duplicateData: Bool
    ) -> [Effect] {
        lastSeen = now
        guard exported else {
            exported = true
            rssi = newRSSI
            txPowerVisible = spec.txPower != nil
            manufacturerData = newManufacturer
            serviceData = newService
            return [.added]
        }
        var changed: [String] = []
        if let old = rssi {
            if !rssiDeltaThreshold || abs(Int(old) - Int(newRSSI)) >= 8 {
                if old != newRSSI { changed.append("RSSI") }
                rssi = newRSSI
            }
        } else {
            rssi = newRSSI
            changed.append("RSSI")
        }
        if !txPowerVisible, spec.txPower != nil {
            txPowerVisible = true
            changed.append("TxPower")
        }
        if !newManufacturer.isEmpty, duplicateData || newManufacturer != manufacturerData {
            manufacturerData.merge(newManufacturer) { $1 }
            changed.append("ManufacturerData")
        }
        if !newService.isEmpty, duplicateData || newService != serviceData {
            serviceData.merge(newService) { $1 }
            changed.append("ServiceData")
        }
        return changed.isEmpty ? [] : [.changed(changed)]
    }

    /// Discovery ended: RSSI and TxPower disappear; temporary non-connectable devices are removed at once.
    package mutating func discoveryStopped() -> [Effect] {
        guard exported else { return [] }
        if temporary, !spec.connectable, !connected { return remove() }
        // In the order bluetoothctl printed them against bluetoothd: TxPower, then RSSI.
        var gone: [String] = []
        if txPowerVisible { gone.append("TxPower") }
        if rssi != nil { gone.append("RSSI") }
        rssi = nil
        txPowerVisible = false
        return gone.isEmpty ? [] : [.invalidated(gone)]
    }

    /// Temporary devices not seen for `timeout` are removed (bluetoothd's TemporaryTimeout, 30 s).
    package mutating func expireIfStale(now: ContinuousClock.Instant, timeout: Duration) -> [Effect] {
        guard exported, temporary, link == .disconnected, let lastSeen, now - lastSeen >= timeout else { return [] }
        return remove()
    }

    /// The adapter was powered off (links already dropped). As bluetoothd 5.66 does: a device with
    /// a link at that moment (`wasLinked`) stays, with its GATT objects, so the next connection
    /// resolves without announcing them again ("DB Hash match: skipping discovery"); unbonded, it
    /// becomes temporary, so it goes after the temporary timeout without an advertisement (from
    /// now). Paired or trusted devices always stay. Other devices go at once (bluetoothd made an
    /// unbonded device temporary again when its link dropped earlier).
    package mutating func adapterPoweredOff(wasLinked: Bool, now: ContinuousClock.Instant) -> [Effect] {
        guard exported, !paired, !trusted else { return [] }
        guard wasLinked else { return remove() }
        temporary = true
        lastSeen = now
        return []
    }

    /// The peer refused the pairing a security raise started (its link has dropped): as bluetoothd
    /// 5.66 and 5.82 do (`device_bonding_failed() status 14`, then `btd_device_set_temporary()
    /// temporary 1`, VM tier 2026-12-07), an unbonded device becomes temporary, so it goes after
    /// the temporary timeout unless an advertisement (discovery) or a `Connect` keeps it.
    package mutating func pairingRefused(now: ContinuousClock.Instant) {
        guard exported, !paired, !trusted else { return }
        temporary = true
        lastSeen = now
    }

    /// bluetoothd's cached GATT database of the device loses `service`, as when the link was cut while
    /// the peer updated its database and bluetoothd kept the old copy: the peer's DB Hash still matches on
    /// the next connection, discovery is skipped and the service stays missing until the device (and its
    /// cache) is removed. Needs the GATT objects exported (a cache to be stale); returns whether it applied.
    package mutating func makeCacheStale(dropping service: BluetoothUUID) -> Bool {
        guard exported, gattExported, gatt.services.contains(where: { $0.uuid == service }) else { return false }
        staleServices.insert(service)
        return true
    }

    /// The object goes (RemoveDevice, stale, or bluetoothd restart); pairing and sessions are forgotten.
    package mutating func remove() -> [Effect] {
        guard exported else { return [] }
        exported = false
        gattExported = false
        staleServices = []
        servicesResolved = false
        link = .disconnected
        connectedAt = nil
        temporary = true
        paired = false
        trusted = false
        modalias = nil
        rssi = nil
        txPowerVisible = false
        manufacturerData = [:]
        serviceData = [:]
        lastSeen = nil
        for id in characteristics.keys { characteristics[id]!.reset() }
        return [.removed]
    }

    // MARK: Connection

    /// `Device1.Connect`.
    package mutating func connect(adapterPowered: Bool, timing: ScenarioTiming) -> ConnectPlan {
        switch link {
        case .connected, .disconnecting: return .reply(nil)
        case .connecting: return .reply(BlueZError.connectAlreadyPending)
        case .disconnected: break
        }
        guard adapterPowered else { return .reply(BlueZError.failed("Input/output error")) }
        temporary = false
        if !pendingFailures.isEmpty {
            let failure = pendingFailures.removeFirst()
            switch failure {
            case .inProgress: return .reply(BlueZError.inProgress)
            case .abortByLocal:
                link = .connecting
                return .linkUpThenAbort(delay: timing.connectDelay)
            case .timeout:
                link = .connecting
                return .pending(delay: timing.connectTimeout, failure: BlueZError.abortByLocal)
            case .resolveStall:
                guard inRange, spec.connectable else { break }
                link = .connecting
                resolveStalls = true
                return .pending(delay: timing.connectDelay, failure: nil)
            case .error(let error):
                link = .connecting
                return .pending(delay: timing.connectDelay, failure: error)
            }
        }
        link = .connecting
        guard inRange, spec.connectable else {
            return .pending(delay: timing.connectTimeout, failure: BlueZError.abortByLocal)
        }
        return .pending(delay: timing.connectDelay, failure: nil)
    }

    /// Whether services must not resolve on the link being made (a `resolve_stall` fault); read once per link.
    package mutating func takeResolveStall() -> Bool {
        defer { resolveStalls = false }
        return resolveStalls
    }

    /// A pending attempt failed (its planned failure fired).
    package mutating func connectFailed() {
        if link == .connecting { link = .disconnected }
    }

    /// The ACL link is up: `Connected` becomes true; services resolve next.
    package mutating func connectionEstablished(at now: ContinuousClock.Instant) -> [Effect] {
        guard link == .connecting else { return [] }
        link = .connected
        connectedAt = now
        return [.changed(["Connected"])]
    }

    /// GATT discovery finished: objects exported (first time), `ServicesResolved` true, sessions re-registered.
    package mutating func resolveServices() -> [Effect] {
        guard link == .connected, !servicesResolved else { return [] }
        return exportServices() + markResolved()
    }

    /// First half of ``resolveServices()``: the GATT objects appear (first connection only) and
    /// `UUIDs` lists every remote service. `ServicesResolved` stays false until ``markResolved()``,
    /// so a client that reads it while the objects are still being exported sees false.
    package mutating func exportServices() -> [Effect] {
        guard link == .connected, !servicesResolved, !gattExported, !gatt.services.isEmpty else { return [] }
        let oldUUIDs = uuids
        gattExported = true
        return uuids != oldUUIDs ? [.gattAdded, .changed(["UUIDs"])] : [.gattAdded]
    }

    /// Second half of ``resolveServices()``: `ServicesResolved` true, notification sessions re-registered.
    package mutating func markResolved() -> [Effect] {
        guard link == .connected, !servicesResolved else { return [] }
        servicesResolved = true
        var effects: [Effect] = [.changed(["ServicesResolved"])]
        for id in characteristics.keys.sorted(by: Self.order) where characteristics[id]!.linkReady() {
            effects.append(.characteristicChanged(id, ["Notifying"]))
        }
        return effects + readDeviceInformation()
    }

    /// `Device1.Disconnect`: cancels a pending attempt (the caller fails that Connect with
    /// `br-connection-canceled`); a live link starts disconnecting. Returns true when the link is up
    /// and the caller must call ``linkLost()`` after bluetoothd's disconnect timer.
    package mutating func requestDisconnect() -> (cancelledAttempt: Bool, mustWait: Bool) {
        switch link {
        case .connecting:
            link = .disconnected
            return (true, false)
        case .connected:
            link = .disconnecting
            return (false, true)
        case .disconnecting: return (false, true)
        case .disconnected: return (false, false)
        }
    }

    /// The link went down (timer after Disconnect, remote drop, out of range, power off).
    package mutating func linkLost() -> [Effect] {
        guard connected else {
            if link == .connecting { link = .disconnected }
            return []
        }
        var effects: [Effect] = []
        if servicesResolved {
            servicesResolved = false
            effects.append(.changed(["ServicesResolved"]))
        }
        link = .disconnected
        connectedAt = nil
        effects.append(.changed(["Connected"]))
        for id in characteristics.keys.sorted(by: Self.order) {
            let closed = characteristics[id]!.linkDropped()
            if closed.notify {
                effects.append(contentsOf: [
                    .closeSocket(id, notify: true), .characteristicChanged(id, ["NotifyAcquired"]),
                ])
            }
            if closed.write {
                effects.append(contentsOf: [
                    .closeSocket(id, notify: false), .characteristicChanged(id, ["WriteAcquired"]),
                ])
            }
        }
        return effects
    }

    // MARK: Pairing and settings

    package enum PairStart: Sendable, Equatable {
        /// Pair replies with this error at once.
        case reply(BlueZError)
        /// Pairing runs: connect first when `needsConnection`, then, for passkey and numeric-comparison
        /// devices (`needsPasskey`), ask the agent.
        case begin(needsConnection: Bool, needsPasskey: Bool)
        /// The device is LE-bonded: bluetoothd's `pair_device` then bonds over BR/EDR, which an
        /// LE-only controller cannot do: `AuthenticationFailed`, and the LE link drops (issue 16).
        case failBREDRBonding
    }

    package mutating func beginPairing() -> PairStart {
        if bonding { return .reply(BlueZError.inProgress) }
        if paired { return .failBREDRBonding }
        bonding = true
        temporary = false
        return .begin(
            needsConnection: link != .connected,
            needsPasskey: spec.pairing == .passkey || spec.pairing == .numericComparison)
    }

    /// Pairing finished; on success `Bonded` and `Paired` become true.
    package mutating func finishPairing(success: Bool) -> [Effect] {
        bonding = false
        guard success, !paired else { return [] }
        paired = true
        // Two signals, as bluetoothd sends them: the key is stored (`Bonded`) before the bonding
        // completes (`Paired`); bluetoothctl printed them in that order.
        return [.changed(["Bonded"]), .changed(["Paired"])]
    }

    /// `CancelPairing`: DoesNotExist when nothing is pending.
    package mutating func cancelPairing() throws(BlueZError) {
        guard bonding else { throw BlueZError.doesNotExist }
        bonding = false
    }

    package mutating func setTrusted(_ value: Bool) -> [Effect] {
        guard value != trusted else { return [] }
        trusted = value
        if value { temporary = false }
        return [.changed(["Trusted"])]
    }

    package mutating func setBlocked(_ value: Bool) -> [Effect] {
        guard value != blocked else { return [] }
        blocked = value
        return [.changed(["Blocked"])]
    }

    /// Setting an empty alias resets it to the name.
    package mutating func setAlias(_ value: String) -> [Effect] {
        alias = value.isEmpty ? nil : value
        return [.changed(["Alias"])]
    }

    /// `Alias` as bluetoothd computes it: the alias, else the name, else the address with dashes.
    package var aliasValue: String {
        alias ?? spec.name ?? spec.address.string.replacingOccurrences(of: ":", with: "-")
    }

    // MARK: Faults and characteristics

    /// Queues connect failures (control channel `InjectConnectFailure`).
    package mutating func injectConnectFailures(_ failure: ConnectFailureKind, count: Int) {
        pendingFailures.append(contentsOf: Array(repeating: failure, count: count))
    }

    package mutating func withCharacteristic<Result>(
        _ id: GattDatabase.CharacteristicID, _ body: (inout CharacteristicState) throws(BlueZError) -> Result
    ) throws(BlueZError) -> Result {
        guard characteristics[id] != nil else { throw BlueZError.doesNotExist }
        return try body(&characteristics[id]!)
    }

    mutating func withCharacteristicUnchecked<Result>(
        _ id: GattDatabase.CharacteristicID, _ body: (inout CharacteristicState) -> Result
    ) -> Result {
        body(&characteristics[id]!)
    }

    /// bluetoothd restarted: links and sessions are gone; devices it stored (connected, paired or
    /// trusted before) come back disconnected, temporary ones are forgotten.
    package mutating func bluetoothdRestarted() {
        link = .disconnected
        connectedAt = nil
        servicesResolved = false
        gattExported = false
        bonding = false
        rssi = nil
        txPowerVisible = false
        for id in characteristics.keys { characteristics[id]!.reset() }
        if temporary {
            exported = false
            manufacturerData = [:]
            serviceData = [:]
            lastSeen = nil
        }
    }

    /// The adapter went away (the controller removed): as after a bluetoothd restart, except that
    /// whether it comes back with the adapter depends on whether bluetoothd had stored it (`stored`:
    /// not temporary before the adapter powered off; the VM tier saw an unbonded device connected
    /// before come back).
    package mutating func adapterRemoved(stored: Bool) {
        if stored { markStored() }
        bluetoothdRestarted()
    }

    /// bluetoothd has the device in its storage (it was connected, paired or trusted): it is not
    /// temporary, and a restarted bluetoothd or a re-added adapter loads it again.
    package mutating func markStored() { temporary = false }

    /// A client left the bus: end its notification sessions everywhere.
    package mutating func clientVanished(_ sender: String) -> [Effect] {
        var effects: [Effect] = []
        for id in characteristics.keys.sorted(by: Self.order) {
            let result = characteristics[id]!.clientVanished(sender)
            if result.releasedSocket { effects.append(.closeSocket(id, notify: true)) }
            if result.notifyingChanged { effects.append(.characteristicChanged(id, ["Notifying"])) }
        }
        return effects
    }

    static func order(_ lhs: GattDatabase.CharacteristicID, _ rhs: GattDatabase.CharacteristicID) -> Bool {
        (lhs.service, lhs.characteristic) < (rhs.service, rhs.characteristic)
    }
}
