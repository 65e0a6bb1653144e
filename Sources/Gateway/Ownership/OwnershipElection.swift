/// Which gateway holds the connection of one connected device when several gateways hear it, in
/// shared-broker mode (docs/multi-gateway.md, "Ownership"). Pure: no I/O, the time is passed in;
/// one value per device on every gateway, fed the same candidacies in the same order (one broker
/// orders them), so every gateway computes the same owner.
///
/// The rule:
/// - A candidacy counts while its gateway is alive (no last will or offline record since), it is
///   younger than ``Rules/lifetime``, and its gateway has a free connection slot or already holds
///   the device (a passive device, ``Rules/needsSlot`` false, needs no slot).
/// - Better is: stronger mean RSSI over the candidacy window, then more free slots (not for a
///   passive device), then the smaller gateway id (so ties break the same way everywhere).
/// - While no counted candidacy says it holds the device (nobody holds it, or the holder's
///   candidacy no longer counts: its last will, the device lost past `silence_timeout` and
///   withdrawn, stale), the best candidacy owns it at once: a function of the candidacies alone,
///   whatever order they came in.
/// - A holder keeps it until a challenger leads it by ``Rules/margin`` dB without a break for
///   ``Rules/switchDelay`` (hysteresis in level and in time: RSSI that flaps does not move the
///   device). Holding is in the candidacies, so a gateway that starts late agrees with the others.
/// - Hand-over is release-first: the new owner connects only once no other counted candidacy
///   says it holds the device (``Role/waiting(for:)`` until then), and a gateway that holds it
///   and is not the owner releases it; an owner that holds it keeps it.
package struct OwnershipElection: Sendable {
    package struct Candidacy: Sendable, Hashable {
        package var gatewayID: String
        /// Mean RSSI over the candidacy window, dBm.
        package var rssi: Double
        package var freeSlots: Int
        /// The gateway holds the device's connection now.
        package var holding: Bool
        /// When it was received (this gateway's clock).
        package var at: ContinuousClock.Instant

        package init(
            gatewayID: String, rssi: Double, freeSlots: Int, holding: Bool = false, at: ContinuousClock.Instant
        ) {
            self.gatewayID = gatewayID
            self.rssi = rssi
            self.freeSlots = freeSlots
            self.holding = holding
            self.at = at
        }
    }

    package struct Rules: Sendable, Hashable {
        /// How much stronger (dB) a challenger's mean RSSI must be than the owner's.
        package var margin: Double
        /// How long the challenger must keep that lead, without a break, before it takes over.
        package var switchDelay: Duration
        /// A candidacy not renewed for this long no longer counts.
        package var lifetime: Duration
        /// Whether owning the device takes a connection slot (false for a passive device, which the
        /// owner only publishes: free slots neither qualify nor rank a candidacy).
        package var needsSlot: Bool

        package init(
            margin: Double = 6, switchDelay: Duration = .seconds(10), lifetime: Duration = .seconds(30),
            needsSlot: Bool = true
        ) {
            self.margin = margin
            self.switchDelay = switchDelay
            self.lifetime = lifetime
            self.needsSlot = needsSlot
        }
    }

    package enum Event: Sendable, Hashable {
        /// A gateway's candidacy, new or renewed (this gateway's own too).
        case candidacy(Candidacy)
        /// A gateway stopped hearing the device (no readings past `silence_timeout`).
        case withdrawn(String)
        /// A gateway's last will or offline record: its candidacies are dropped.
        case gatewayOffline(String)
        /// Time passed (the timer armed for ``nextCheck``).
        case tick
    }

    /// What this gateway does with the device.
    package enum Role: Sendable, Hashable {
        /// Connect and keep the device: this gateway owns it and nobody else holds it.
        case holder
        /// This gateway owns it, but another gateway still holds it: wait for its release.
        case waiting(for: String)
        /// Another gateway owns it, or nobody can: do not connect it.
        case standby
    }

    package enum Action: Sendable, Hashable {
        case ownerChanged(from: String?, to: String?)
        /// Become the holder: connect, subscribe, execute the device's commands.
        case connect
        /// Stop holding: disconnect, and say so in the next candidacy.
        case release
    }

    package let me: String
    package let rules: Rules
    package private(set) var owner: String?
    package private(set) var role: Role = .standby
    package private(set) var candidacies: [String: Candidacy] = [:]
    /// A challenger leading the owner by the margin, and since when.
    package private(set) var lead: (gatewayID: String, since: ContinuousClock.Instant)?
    /// A challenger whose lead lasted the switch delay: it owns the device while the holder releases it.
    package private(set) var handover: String?

    package init(me: String, rules: Rules = Rules()) {
        self.me = me
        self.rules = rules
    }

    package mutating func handle(_ event: Event, at now: ContinuousClock.Instant) -> [Action] {
        switch event {
        case .candidacy(let candidacy): candidacies[candidacy.gatewayID] = candidacy
        case .withdrawn(let id), .gatewayOffline(let id): candidacies[id] = nil
        case .tick: break
        }
        return decide(at: now)
    }

    /// When to send ``Event/tick``: the end of a challenger's switch delay or the first candidacy
    /// to go stale, whichever comes first; nil when nothing is pending.
    package var nextCheck: ContinuousClock.Instant? {
        let expiries = candidacies.values.map { $0.at + rules.lifetime }
        let switchAt = lead.map { $0.since + rules.switchDelay }
        return (expiries + [switchAt].compactMap { $0 }).min()
    }

    /// Whether `a` is a better candidate than `b`: RSSI, then free slots (when owning takes a
    /// slot), then the smaller id.
    package static func isBetter(_ a: Candidacy, than b: Candidacy, slots: Bool = true) -> Bool {
        if a.rssi != b.rssi { return a.rssi > b.rssi }
        if slots, a.freeSlots != b.freeSlots { return a.freeSlots > b.freeSlots }
        return a.gatewayID < b.gatewayID
    }

    private func isBetter(_ a: Candidacy, than b: Candidacy) -> Bool {
        Self.isBetter(a, than: b, slots: rules.needsSlot)
    }

    private func counted(at now: ContinuousClock.Instant) -> [Candidacy] {
        candidacies.values.filter {
            now < $0.at + rules.lifetime && ($0.holding || $0.freeSlots > 0 || !rules.needsSlot)
        }
    }

    private mutating func decide(at now: ContinuousClock.Instant) -> [Action] {
        // Stale candidacies are forgotten (their expiry was a ``nextCheck``).
        candidacies = candidacies.filter { now < $0.value.at + rules.lifetime }
        let eligible = counted(at: now)
        let best = eligible.min { isBetter($0, than: $1) }
        let holders = eligible.filter(\.holding)
        let incumbent = holders.min { isBetter($0, than: $1) }
        var next: String?
        if let incumbent, let best {
            if let target = handover, target != incumbent.gatewayID,
                let challenger = eligible.first(where: { $0.gatewayID == target }),
                challenger.rssi >= incumbent.rssi + rules.margin
            {
                // Decided: the challenger owns it and waits for the holder's release.
                next = target
            } else if best.gatewayID == incumbent.gatewayID || best.rssi < incumbent.rssi + rules.margin {
                handover = nil
                lead = nil
                next = incumbent.gatewayID
            } else {
                handover = nil
                if lead?.gatewayID != best.gatewayID { lead = (best.gatewayID, now) }
                if let lead, now >= lead.since + rules.switchDelay {
                    self.lead = nil
                    handover = best.gatewayID
                    next = best.gatewayID
                } else {
                    next = incumbent.gatewayID
                }
            }
        } else {
            // Nobody holds it: the best candidacy, by the order alone (no history, so every
            // gateway agrees whatever order the candidacies came in).
            lead = nil
            handover = nil
            next = best?.gatewayID
        }
        var actions: [Action] = []
        if next != owner { actions.append(.ownerChanged(from: owner, to: next)) }
        owner = next
        let newRole: Role
        if next == me, candidacies[me]?.holding == true || role == .holder {
            // Already holding: keep it (another holder is the one that must let go).
            newRole = .holder
        } else if next == me {
            let other = holders.filter { $0.gatewayID != me }.min { isBetter($0, than: $1) }
            newRole = other.map { .waiting(for: $0.gatewayID) } ?? .holder
        } else {
            newRole = .standby
        }
        if newRole == .holder, role != .holder { actions.append(.connect) }
        if newRole != .holder, role == .holder { actions.append(.release) }
        role = newRole
        return actions
    }
}
