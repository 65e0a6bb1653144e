import Foundation

/// The bound on devices the gateway adds by itself: automatic devices (``AutoDevices``, `auto_devices`)
/// and the devices a match without an address splits off (``MatchInstances``).
///
/// At most ``maximum`` are followed. A newcomer beyond that takes the place of the ones seen least
/// recently, but only of those not seen for ``idleAge``; when too few are that idle, the newcomer
/// is refused and the ones followed stay. Without the age, a crowd of recognised advertisers larger
/// than the bound would churn for ever: each eviction's next advertisement would add it back and
/// evict another, deleting and recreating its Home Assistant entities every time. Pure: the time
/// is a parameter.
package struct DeviceBound: Sendable, Equatable {
    /// The most devices followed at once (at least 1).
    package var maximum: Int
    /// How long a device must have gone unseen before a newcomer may take its place.
    package var idleAge: TimeInterval

    /// `auto_devices.evict_after`'s default, also the match instances' age: several advertising
    /// intervals and longer than a typical outage of a sensor (a door in the way, a battery swap).
    package static let defaultIdleAge: TimeInterval = 600

    package init(maximum: Int, idleAge: TimeInterval = Self.defaultIdleAge) {
        self.maximum = max(1, maximum)
        self.idleAge = max(0, idleAge)
    }

    /// What happens to a newcomer.
    package enum Decision: Sendable, Equatable {
        /// It is added, after these (seen least recently first) are dropped.
        case admit(evicting: [String])
        /// It is not added: the bound is reached and too few devices are idle.
        case refuse
    }

    /// Decides on a newcomer, given when each device followed now (not the newcomer) was last seen.
    package func decide(lastSeen: [String: Date], now: Date) -> Decision {
        let excess = lastSeen.count + 1 - maximum
        guard excess > 0 else { return .admit(evicting: []) }
        let idle = lastSeen.filter { now.timeIntervalSince($0.value) >= idleAge }
            .sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        guard idle.count >= excess else { return .refuse }
        return .admit(evicting: idle.prefix(excess).map(\.key))
    }
}
