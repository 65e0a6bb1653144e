/// Shared-broker mode: the ownership of every connected device on this gateway
/// (docs/multi-gateway.md, "Ownership of connected devices"). Pure: no I/O, the time is passed
/// in; the gateway feeds it what it hears (its own advertisements and links, the candidacies and
/// gateway records from the broker) and performs the actions it returns.
///
/// - This gateway's **candidacy** for a device (``OwnershipCandidacy``) exists while it heard the
///   device within ``Settings/window``, or BlueZ still keeps the device object it made when the
///   device advertised (``Event/vanished(_:)``: bluetoothd removes it once the device has not
///   advertised for its `TemporaryTimeout`), or it holds its link; and not after the silence
///   watchdog found the device lost (until it is heard again). It is published retained when it changes
///   (RSSI by ``Settings/rssiStep``, free slots, holding), at most once per
///   ``Settings/minimumInterval`` per device, renewed every ``Settings/renewal``, and withdrawn
///   (an empty retained payload) when it ends. At each broker connection every device's
///   candidacy is published again or withdrawn, which replaces what a previous run left retained.
/// - One ``OwnershipElection`` per device reads the candidacies **as the broker delivers them**,
///   this gateway's own included (its echo), so every gateway feeds its elections the same
///   sequence. Only gateways whose record is online count: a candidacy from a gateway not known
///   online yet waits for its record, and a gateway's offline record (its last will) drops all of
///   its candidacies.
/// - The election's `connect` and `release` become ``Action/take(_:)`` and
///   ``Action/release(_:)`` for the connection pool.
/// - A **passive** device (docs/multi-gateway.md, "De-duplication of passive readings") is elected
///   the same way without slots: its owner is the one gateway that publishes its advertisements
///   (``publishes(_:)``), and holding it means publishing it.
package struct OwnershipCoordinator: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package struct Settings: Sendable, Hashable {
        package var rules: OwnershipElection.Rules
        /// The RSSI window of a candidacy (and how long a device not heard keeps one).
        package var window: Duration
        /// The shortest time between two publications of one device's candidacy.
        package var minimumInterval: Duration
        /// An unchanged candidacy is published again after this long (well inside the rules' lifetime).
        package var renewal: Duration
        /// A mean RSSI that moved less than this (dB) since it was published is not published again before the renewal.
        package var rssiStep: Double

        package init(
            rules: OwnershipElection.Rules = OwnershipElection.Rules(), window: Duration = .seconds(30),
            minimumInterval: Duration = .seconds(1), renewal: Duration = .seconds(10), rssiStep: Double = 1
        ) {
            self.rules = rules
            self.window = window
            self.minimumInterval = minimumInterval
            self.renewal = renewal
            self.rssiStep = rssiStep
        }
    }

    package enum Event: Sendable, Hashable {
        /// This gateway heard the device advertise (so BlueZ has an object for it).
        case heard(String, rssi: Int)
        /// BlueZ removed the device's object: bluetoothd removes one it made for an advertiser
        /// (temporary) once the device has not advertised for its `TemporaryTimeout` (30 s by
        /// default). Until then a device BlueZ reports once (a steady signal and an advertisement
        /// that never changes: bluetoothd signals nothing new) is still heard.
        case vanished(String)
        /// BlueZ keeps the device's object for good (connected in an earlier run, or paired or
        /// trusted): its presence says nothing until it goes (``vanished(_:)``).
        case persistent(String)
        /// The device's link on this gateway went up (true) or down.
        case linked(String, Bool)
        /// The silence watchdog gave up on the device (no readings past `silence_timeout`):
        /// this gateway lets it go and withdraws until it hears it again.
        case lost(String)
        /// This gateway's free connection slots.
        case freeSlots(Int)
        /// A candidacy from the broker (this gateway's own echo too); nil: withdrawn.
        case candidacy(gateway: String, device: String, OwnershipCandidacy?)
        /// Another gateway's record: online or offline (its last will, its clean stop), or removed.
        case gateway(String, online: Bool)
        /// This gateway's broker connection came up or went.
        case broker(connected: Bool)
        /// The devices under ownership now (a reload); `passive` of them are published, not connected.
        case devices(Set<String>, passive: Set<String> = [])
        /// Time passed (the timer armed for ``nextDeadline``).
        case tick
    }

    package enum Action: Sendable, Hashable {
        /// Publish this gateway's candidacy for the device (retained).
        case publish(String, OwnershipCandidacy)
        /// Withdraw it (an empty retained payload).
        case withdraw(String)
        /// The pool may connect the device and serve it.
        case take(String)
        /// The pool must disconnect the device and not connect it again.
        case release(String)
        case ownerChanged(String, from: String?, to: String?)
    }

    /// Who speaks for a device (its commands and its availability).
    package enum Duty: Sendable, Hashable {
        /// This gateway owns it (holds it, or waits for the holder's release).
        case owner
        /// Nobody owns it and this gateway has the smallest id of the gateways online: it
        /// answers, with a refusal.
        case speaker
        /// Another gateway owns it (or speaks for it): stay silent.
        case silent(owner: String?)
    }

    struct Device: Sendable {
        var election: OwnershipElection
        /// A passive device: owning it means publishing its advertisements, not holding a link.
        var passive: Bool
        var heard: RSSIWindow
        var linked = false
        var taken = false
        /// Released while linked: it still holds the device until the link is down.
        var releasing = false
        /// The watchdog gave up on it: no candidacy until it is heard again.
        var lost = false
        /// BlueZ keeps the object it made for the device's advertisements (from the first report
        /// to ``Event/vanished(_:)``).
        var present = false
        /// The object outlives the device's silence: bluetoothd makes a device it connected
        /// persistent (not temporary), so while it stays its presence says nothing. Set by a link
        /// or ``Event/persistent(_:)``, cleared when the object goes.
        var lasting = false
        var published: OwnershipCandidacy?
        var publishedAt: Instant?
    }

    package let me: String
    package let settings: Settings
    private(set) var devices: [String: Device] = [:]
    /// Other gateways whose record says online.
    package private(set) var online: Set<String> = []
    /// Candidacies of gateways not known online yet (their record has not come), fed when it comes.
    private var waiting: [String: [String: OwnershipCandidacy]] = [:]
    private var freeSlots: Int
    private var brokerUp = false

    package init(
        me: String, devices: Set<String>, passive: Set<String> = [], freeSlots: Int, settings: Settings = Settings()
    ) {
        self.me = me
        self.settings = settings
        self.freeSlots = freeSlots
        for id in devices.union(passive) {
            self.devices[id] = Self.device(me: me, passive: passive.contains(id), settings: settings)
        }
    }

    private static func device(me: String, passive: Bool, settings: Settings) -> Device {
        var rules = settings.rules
        rules.needsSlot = !passive
        return Device(
            election: OwnershipElection(me: me, rules: rules), passive: passive,
            heard: RSSIWindow(window: settings.window))
    }

    // MARK: Queries

    /// Whether the device is under ownership (a configured connected device in this mode).
    package func governs(_ device: String) -> Bool { devices.value(exactly: device) != nil }

    /// The device's owner as this gateway computes it; nil when nobody can own it.
    package func owner(of device: String) -> String? { devices.value(exactly: device)?.election.owner }

    /// This gateway's candidacy for the device as last published; nil when withdrawn or never published.
    package func lastPublished(_ device: String) -> OwnershipCandidacy? { devices[device]?.published }

    /// Whether this gateway has taken the device (the pool may connect it).
    package func hasTaken(_ device: String) -> Bool { devices[device]?.taken ?? false }

    /// Whether the device is a passive one under ownership (published by its owner, never connected).
    package func isPassive(_ device: String) -> Bool { devices[device]?.passive ?? false }

    /// Whether this gateway publishes the device's advertisement readings: always for a device
    /// not under ownership as a passive one; otherwise unless another gateway owns it. With no
    /// owner (before the first candidacies, or with the broker gone so long that every candidacy
    /// expired) every gateway that hears it publishes: a reading twice rather than none.
    package func publishes(_ device: String) -> Bool {
        guard let state = devices[device], state.passive else { return true }
        guard let owner = state.election.owner else { return true }
        return owner == me
    }

    package func duty(for device: String) -> Duty {
        guard let state = devices.value(exactly: device) else { return .owner }
        if let owner = state.election.owner { return owner == me ? .owner : .silent(owner: owner) }
        let speaker = online.union([me]).min() ?? me
        return speaker == me ? .speaker : .silent(owner: nil)
    }

    /// When to send ``Event/tick``: a candidacy due (rate bound, renewal), a sample leaving the
    /// window, an election's next check; nil when nothing is pending.
    package var nextDeadline: Instant? {
        var deadline: Instant?
        func consider(_ instant: Instant?) {
            guard let instant else { return }
            deadline = deadline.map { min($0, instant) } ?? instant
        }
        for state in devices.values {
            consider(state.election.nextCheck)
            if !state.linked, !state.present || state.lasting { consider(state.heard.nextExpiry) }
            if brokerUp { consider(due(state)) }
        }
        return deadline
    }

    // MARK: Events

    package mutating func handle(_ event: Event, at now: Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .heard(let id, let rssi):
            guard devices[id] != nil else { break }
            devices[id]?.heard.add(rssi, at: now)
            devices[id]?.lost = false
            devices[id]?.present = true
            actions += refresh(id, at: now)
        case .vanished(let id):
            guard devices[id] != nil else { break }
            devices[id]?.present = false
            devices[id]?.lasting = false
            actions += refresh(id, at: now)
        case .persistent(let id):
            guard devices[id] != nil, devices[id]?.lasting == false else { break }
            devices[id]?.lasting = true
            actions += refresh(id, at: now)
        case .linked(let id, let up):
            guard devices[id] != nil else { break }
            devices[id]?.linked = up
            if up { devices[id]?.lasting = true }
            if !up { devices[id]?.releasing = false }
            actions += refresh(id, at: now)
        case .lost(let id):
            guard var state = devices[id] else { break }
            state.heard.clear()
            state.lost = true
            if state.taken {
                state.taken = false
                state.releasing = state.linked
                actions.append(.release(id))
            }
            devices[id] = state
            actions += refresh(id, at: now)
        case .freeSlots(let slots):
            guard slots != freeSlots else { break }
            freeSlots = slots
            for id in devices.keys.sorted() { actions += refresh(id, at: now) }
        case .candidacy(let gateway, let device, let candidacy):
            guard devices[device] != nil else { break }
            if gateway == me || online.contains(gateway) {
                let event: OwnershipElection.Event =
                    candidacy.map { .candidacy($0.election(gatewayID: gateway, at: now)) } ?? .withdrawn(gateway)
                actions += elect(device, event, at: now)
            } else {
                waiting[gateway, default: [:]][device] = candidacy
            }
        case .gateway(let gateway, let up):
            guard gateway != me else { break }
            if up {
                guard online.insert(gateway).inserted else { break }
                for (device, candidacy) in (waiting.removeValue(forKey: gateway) ?? [:]).sorted(by: { $0.key < $1.key })
                {
                    guard devices[device] != nil else { continue }
                    actions += elect(device, .candidacy(candidacy.election(gatewayID: gateway, at: now)), at: now)
                }
            } else {
                online.remove(gateway)
                waiting[gateway] = nil
                for id in devices.keys.sorted() { actions += elect(id, .gatewayOffline(gateway), at: now) }
            }
        case .broker(let connected):
            brokerUp = connected
            guard connected else { break }
            // A new connection: every candidacy goes out again (or is withdrawn), replacing
            // whatever an earlier run of this gateway left retained.
            for id in devices.keys.sorted() {
                devices[id]?.published = nil
                devices[id]?.publishedAt = nil
                // (The withdrawal does not start the rate bound: a device heard a moment later goes out at once.)
                if let candidacy = desired(devices[id]!) {
                    actions += publish(id, candidacy, at: now)
                } else {
                    actions.append(.withdraw(id))
                }
            }
        case .devices(let connected, let passive):
            let ids = connected.union(passive)
            // A device whose kind changed (connected ↔ passive) starts over as the new kind.
            for id in devices.keys.sorted() where !ids.contains(id) || devices[id]?.passive != passive.contains(id) {
                if devices[id]?.taken == true { actions.append(.release(id)) }
                if brokerUp, devices[id]?.published != nil { actions.append(.withdraw(id)) }
                devices[id] = nil
            }
            for id in ids.sorted() where devices[id] == nil {
                devices[id] = Self.device(me: me, passive: passive.contains(id), settings: settings)
            }
        case .tick:
            for id in devices.keys.sorted() {
                devices[id]?.heard.expire(at: now)
                actions += elect(id, .tick, at: now)
                actions += refresh(id, at: now)
            }
        }
        return actions
    }

    // MARK: Deciding

    /// This gateway's candidacy as it is now; nil when it has none.
    private func desired(_ state: Device) -> OwnershipCandidacy? {
        guard !state.lost, state.linked || state.heard.hearing || (state.present && !state.lasting) else { return nil }
        // A device linked before it was ever heard (restored by BlueZ) is put at the weakest signal.
        // A link this gateway did not take (one BlueZ kept from an earlier run) is not holding: the
        // pool lets it go unless the election gives it the device.
        return OwnershipCandidacy(
            rssi: state.heard.lastMean ?? -127, freeSlots: freeSlots, holding: state.taken || state.releasing)
    }

    /// When the device's candidacy is due to be published: at once the first time, at the end of
    /// the rate bound after a change, at the renewal otherwise; nil when it has none or was never
    /// published in this connection (``refresh(_:at:)`` publishes that at once).
    private func due(_ state: Device) -> Instant? {
        guard let wanted = desired(state), let at = state.publishedAt else { return nil }
        guard let published = state.published else { return at + settings.minimumInterval }
        let changed =
            published.holding != wanted.holding || published.freeSlots != wanted.freeSlots
            || abs(published.rssi - wanted.rssi) >= settings.rssiStep
        return changed ? at + settings.minimumInterval : at + settings.renewal
    }

    /// Publishes or withdraws the device's candidacy when it is due (``due(_:)``); a withdrawal goes at once.
    private mutating func refresh(_ id: String, at now: Instant) -> [Action] {
        guard brokerUp, let state = devices[id] else { return [] }
        guard let wanted = desired(state) else {
            guard state.published != nil else { return [] }
            devices[id]?.published = nil
            devices[id]?.publishedAt = now
            return [.withdraw(id)]
        }
        if state.publishedAt != nil {
            guard let due = due(state), now >= due else { return [] }
        }
        return publish(id, wanted, at: now)
    }

    private mutating func publish(_ id: String, _ candidacy: OwnershipCandidacy, at now: Instant) -> [Action] {
        devices[id]?.published = candidacy
        devices[id]?.publishedAt = now
        return [.publish(id, candidacy)]
    }

    /// Feeds one device's election and turns what it decides into pool actions.
    private mutating func elect(_ id: String, _ event: OwnershipElection.Event, at now: Instant) -> [Action] {
        guard var state = devices[id] else { return [] }
        var actions: [Action] = []
        var changed = false
        for action in state.election.handle(event, at: now) {
            switch action {
            case .ownerChanged(let from, let to):
                actions.append(.ownerChanged(id, from: from, to: to))
            case .connect where !state.taken:
                state.taken = true
                changed = true
                actions.append(.take(id))
            case .release where state.taken:
                state.taken = false
                state.releasing = state.linked
                changed = true
                actions.append(.release(id))
            case .connect, .release:
                break
            }
        }
        devices[id] = state
        if changed { actions += refresh(id, at: now) }
        return actions
    }
}
