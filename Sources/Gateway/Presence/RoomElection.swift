/// The room of one device (docs/multi-gateway.md, "Room presence"): of the gateways whose
/// presence report for it is recent, the nearest. Pure; every gateway feeds it the same reports
/// (its own echo included, in the order the broker delivers them) and so computes the same room.
///
/// - **What counts:** a report received within ``Rules/timeout`` (a gateway that stops hearing
///   the device stops publishing and drops out), from a gateway not known offline (its last will
///   drops its reports at once).
/// - **Nearest:** the smallest distance; equal distances, the smaller gateway id.
/// - **Hysteresis:** the current gateway keeps the device until another is nearer by
///   ``Rules/margin`` (a fraction of the current distance) without a break for
///   ``Rules/switchDelay``. With no current gateway (the first report, or the current one dropped
///   out), the nearest counts at once.
package struct RoomElection: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package struct Rules: Sendable, Hashable {
        package var margin: Double
        package var switchDelay: Duration
        package var timeout: Duration

        package init(margin: Double = 0.2, switchDelay: Duration = .seconds(2), timeout: Duration = .seconds(15)) {
            self.margin = margin
            self.switchDelay = switchDelay
            self.timeout = timeout
        }
    }

    /// One gateway's last report as the election reads it.
    package struct Report: Sendable, Hashable {
        package var gateway: String
        package var room: String
        package var distance: Double
        package var at: Instant

        package init(gateway: String, room: String, distance: Double, at: Instant) {
            self.gateway = gateway
            self.room = room
            self.distance = distance
            self.at = at
        }
    }

    /// The nearest gateway and its room.
    package struct Choice: Sendable, Hashable {
        package var gateway: String
        package var room: String

        package init(gateway: String, room: String) {
            self.gateway = gateway
            self.room = room
        }
    }

    package let rules: Rules
    private(set) var reports: [String: Report] = [:]
    /// The gateway the device is in the room of; nil when no report counts.
    package private(set) var current: String?
    /// Since when another gateway leads the current one by the margin.
    private var leadSince: Instant?

    package init(rules: Rules) {
        self.rules = rules
    }

    /// The room now: the current gateway's report.
    package var choice: Choice? {
        guard let current, let report = reports[current] else { return nil }
        return Choice(gateway: current, room: report.room)
    }

    package mutating func received(_ report: Report) {
        reports[report.gateway] = report
        decide(at: report.at)
    }

    /// The gateway went offline (its last will) or withdrew.
    package mutating func remove(_ gateway: String, at now: Instant) {
        reports[gateway] = nil
        decide(at: now)
    }

    package mutating func tick(at now: Instant) {
        decide(at: now)
    }

    /// When the election needs to look again: a report timing out, the switch delay ending.
    package var nextCheck: Instant? {
        let expiries = reports.values.map { $0.at + rules.timeout }
        let candidates = expiries + [leadSince.map { $0 + rules.switchDelay }].compactMap { $0 }
        return candidates.min()
    }

    private mutating func decide(at now: Instant) {
        reports = reports.filter { now - $0.value.at < rules.timeout }
        let best = reports.values.min { ($0.distance, $0.gateway) < ($1.distance, $1.gateway) }
        guard let best else {
            current = nil
            leadSince = nil
            return
        }
        guard let current, let held = reports[current] else {
            self.current = best.gateway
            leadSince = nil
            return
        }
        guard best.gateway != current, best.distance <= held.distance * (1 - rules.margin) else {
            leadSince = nil
            return
        }
        let since = leadSince ?? now
        if now - since >= rules.switchDelay {
            self.current = best.gateway
            leadSince = nil
        } else {
            leadSince = since
        }
    }
}
