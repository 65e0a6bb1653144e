import Configuration
import Timekeeping

/// Room presence on one gateway (docs/multi-gateway.md, "Room presence"). Pure: no I/O, the time
/// is passed in; the gateway feeds it the advertisements it hears and the presence reports it
/// receives from the broker, and performs the actions it returns.
///
/// - **This gateway's presence** for a device: the RSSI of its advertisements, smoothed
///   (``SmoothedRSSI``), and a distance from it and the device's signal at 1 m (the iBeacon's
///   measured power, an Eddystone's TX power at 0 m minus 41 dB, else the device's `tx_power`,
///   else `presence.reference_power`). Published at a sample: at once the first time, then when it
///   moved by ``Settings/rssiStep`` or more but at most once per ``Settings/interval``, and at
///   least every ``Settings/renewal`` while the device is heard. A device no longer heard is no
///   longer published; the others drop this gateway after ``Settings/rules`` timeout. A device
///   this gateway holds a link to (``Event/holding(_:_:)``) usually stops advertising: its last
///   smoothed RSSI is renewed every ``Settings/renewal`` for as long as the link is up (the link
///   says the device is still in range; BlueZ gives no RSSI of a connection).
/// - **The room** of a device: one ``RoomElection`` fed with every report as the broker delivers
///   it (this gateway's echo included). A change becomes ``Action/room(_:_:)``, but only once the
///   gateway has been connected for ``Settings/warmUp`` (one renewal: by then every gateway that
///   hears the device has reported it), so a gateway that starts does not announce the room of
///   the only report it has.
package struct PresenceCoordinator: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package struct Settings: Sendable, Hashable {
        package var rules: RoomElection.Rules
        package var pathLossExponent: Double
        package var referencePower: Int
        package var smoothing: Duration
        package var interval: Duration
        package var renewal: Duration
        /// A smoothed RSSI that moved less than this (dB) since it was published waits for the renewal.
        package var rssiStep: Double
        /// How long after the broker connection room changes are announced.
        package var warmUp: Duration

        package init(
            rules: RoomElection.Rules = RoomElection.Rules(), pathLossExponent: Double = 2.5,
            referencePower: Int = -59, smoothing: Duration = .seconds(3), interval: Duration = .seconds(1),
            renewal: Duration = .seconds(5), rssiStep: Double = 1, warmUp: Duration? = nil
        ) {
            self.rules = rules
            self.pathLossExponent = pathLossExponent
            self.referencePower = referencePower
            self.smoothing = smoothing
            self.interval = interval
            self.renewal = renewal
            self.rssiStep = rssiStep
            self.warmUp = warmUp ?? renewal
        }

        package init(_ presence: PresenceSettings) {
            self.init(
                rules: RoomElection.Rules(
                    margin: presence.margin, switchDelay: presence.switchDelay, timeout: presence.timeout),
                pathLossExponent: presence.pathLossExponent, referencePower: presence.referencePower,
                smoothing: presence.smoothing, interval: presence.interval, renewal: presence.renewal)
        }
    }

    package enum Event: Sendable, Hashable {
        /// This gateway heard the device advertise; `advertised`: the signal at 1 m its
        /// advertisement says (iBeacon, Eddystone), nil when it says none.
        case heard(String, rssi: Int, advertised: Int?)
        /// A presence report from the broker (this gateway's own echo too).
        case report(gateway: String, device: String, PresenceReport)
        /// Another gateway's record: offline (its last will, its clean stop, removed) drops its reports.
        case gateway(String, online: Bool)
        /// This gateway's broker connection came up or went.
        case broker(connected: Bool)
        /// This gateway took (true) or lost (false) a link to the device.
        case holding(String, Bool)
        /// Time passed (the timer armed for ``nextDeadline``).
        case tick
    }

    package enum Action: Sendable, Hashable {
        /// Publish this gateway's presence for the device.
        case publish(String, rssi: Double, distance: Double)
        /// The device's room changed (nil: no gateway hears it).
        case room(String, RoomElection.Choice?)
    }

    struct Heard: Sendable {
        var rssi: SmoothedRSSI
        var advertised: Int?
        var publishedRSSI: Double?
        var publishedAt: Instant?
    }

    package let settings: Settings
    /// `tx_power` of the configured devices that have one.
    package var txPower: [String: Int]
    private(set) var heard: [String: Heard] = [:]
    private(set) var rooms: [String: RoomElection] = [:]
    /// The room last announced per device (after the warm-up).
    private(set) var announced: [String: RoomElection.Choice] = [:]
    /// The devices this gateway holds a link to.
    private(set) var held: Set<String> = []
    private var connectedAt: Instant?
    private var warm = false

    package init(settings: Settings, txPower: [String: Int] = [:]) {
        self.settings = settings
        self.txPower = txPower
    }

    /// The device's room as this gateway computes it.
    package func room(of device: String) -> RoomElection.Choice? { rooms[device]?.choice }

    /// Whether room changes are announced (the warm-up after the broker connection is over).
    package var announcing: Bool { warm }

    /// The signal at 1 m an advertisement says: an iBeacon's measured power (at 1 m), an
    /// Eddystone's TX power (at 0 m; 41 dB more than at 1 m, the Eddystone convention).
    package static func advertisedPower(decoder: String, fields: [String: Double]) -> Int? {
        switch decoder {
        case "ibeacon": fields["measured_power"].map { Int($0) }
        case "eddystone": fields["tx_power"].map { Int($0) - 41 }
        default: nil
        }
    }

    package var nextDeadline: Instant? {
        var deadlines = rooms.values.compactMap(\.nextCheck)
        if !warm, let connectedAt { deadlines.append(connectedAt + settings.warmUp) }
        if connectedAt != nil {
            for device in held {
                if let at = heard[device]?.publishedAt { deadlines.append(at + settings.renewal) }
            }
        }
        return deadlines.min()
    }

    package mutating func handle(_ event: Event, at now: Instant) -> [Action] {
        switch event {
        case .heard(let device, let rssi, let advertised):
            var state = heard[device] ?? Heard(rssi: SmoothedRSSI(timeConstant: settings.smoothing))
            state.rssi.add(rssi, at: now)
            if let advertised { state.advertised = advertised }
            heard[device] = state
            return publishIfDue(device, at: now)
        case .holding(let device, let up):
            if up { held.insert(device) } else { held.remove(device) }
            return []
        case .report(let gateway, let device, let report):
            var election = rooms[device] ?? RoomElection(rules: settings.rules)
            election.received(
                RoomElection.Report(gateway: gateway, room: report.room, distance: report.distance, at: now))
            rooms[device] = election
            return announce([device], at: now)
        case .gateway(let gateway, let online):
            guard !online else { return [] }
            for device in rooms.keys { rooms[device]?.remove(gateway, at: now) }
            return announce(rooms.keys.sorted(), at: now)
        case .broker(let connected):
            connectedAt = connected ? now : nil
            warm = false
            // A new connection publishes every presence again at its next sample.
            for device in heard.keys {
                heard[device]?.publishedAt = nil
                heard[device]?.publishedRSSI = nil
            }
            return []
        case .tick:
            // A held device's presence, renewed with its last value (it does not advertise).
            let renewed = held.sorted().flatMap { publishIfDue($0, at: now) }
            for device in rooms.keys { rooms[device]?.tick(at: now) }
            if !warm, let connectedAt, now - connectedAt >= settings.warmUp {
                warm = true
                announced = [:]
                // The first announcement after the warm-up: every room known, changed or not.
                return renewed
                    + rooms.keys.sorted().compactMap { device in
                        guard let choice = rooms[device]?.choice else { return nil }
                        announced[device] = choice
                        return .room(device, choice)
                    }
            }
            return renewed + announce(rooms.keys.sorted(), at: now)
        }
    }

    /// This gateway's presence for the device, when one is due (``due(_:_:at:)``).
    private mutating func publishIfDue(_ device: String, at now: Instant) -> [Action] {
        guard connectedAt != nil, var state = heard[device], let value = state.rssi.value, due(state, value, at: now)
        else { return [] }
        state.publishedRSSI = value
        state.publishedAt = now
        heard[device] = state
        let reference = Double(state.advertised ?? txPower[device] ?? settings.referencePower)
        return [
            .publish(
                device, rssi: value,
                distance: SmoothedRSSI.distance(rssi: value, reference: reference, exponent: settings.pathLossExponent))
        ]
    }

    private func due(_ state: Heard, _ value: Double, at now: Instant) -> Bool {
        guard let at = state.publishedAt, let published = state.publishedRSSI else { return true }
        if now - at >= settings.renewal { return true }
        return now - at >= settings.interval && abs(value - published) >= settings.rssiStep
    }

    private mutating func announce(_ devices: [String], at now: Instant) -> [Action] {
        guard warm else { return [] }
        var actions: [Action] = []
        for device in devices {
            let choice = rooms[device]?.choice
            guard choice != announced[device] else { continue }
            // A device that was never in a room and still is not: nothing to say.
            if choice == nil, announced[device] == nil { continue }
            announced[device] = choice
            actions.append(.room(device, choice))
        }
        return actions
    }
}
