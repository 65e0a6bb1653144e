import JSON

/// Shared-broker mode and Home Assistant (docs/multi-gateway.md, "Home Assistant: one device"):
/// the owner of a device follows the device's retained config topics and announces a config
/// again when the broker's copy names another gateway's bridge as `via_device`. A former owner's
/// announcement can reach the broker after the owner's: a gateway that owned the device for a
/// moment at the start (before the nearest gateway's candidacy came), or an old owner publishing a
/// field's config during a hand-back. Pure: the caller passes the time and performs the actions.
///
/// - A config naming this gateway's bridge (its own echo, or anyone's naming it), or a deleted
///   one, settles its topic: nothing to do, so nothing loops on its own echo.
/// - A config naming another bridge while this gateway owns the device is announced again at
///   once, then again only if the broker's copy names another bridge once more, each time after
///   twice the previous wait (``Settings/minimumInterval`` first), and at most
///   ``Settings/maximumRepairs`` times per topic while this gateway owns the device. Ownership
///   converges, so two gateways that both believe for a moment that they own the device stop
///   once one of them no longer owns it; two that kept believing it (a device governed by one of
///   them only) give up after their repairs instead of announcing it back and forth forever
///   (``Action/gaveUp(topic:device:bridge:)``).
/// - Becoming the owner counts as the first repair of every topic that named another bridge: the
///   new owner announces all it knows of the device then (``owning(_:_:at:)``).
package struct ViaDeviceRepair: Sendable {
    package typealias Instant = ContinuousClock.Instant

    package struct Settings: Sendable, Hashable {
        /// The wait before the second repair of a topic (doubling for each further one).
        package var minimumInterval: Duration
        /// The most repairs of one topic while this gateway owns its device.
        package var maximumRepairs: Int

        package init(minimumInterval: Duration = .seconds(1), maximumRepairs: Int = 4) {
            self.minimumInterval = minimumInterval
            self.maximumRepairs = maximumRepairs
        }
    }

    package enum Action: Sendable, Hashable {
        /// Publish this gateway's config for `topic` again (when it has one: a field it has not
        /// seen yet has none, and is announced with its first reading).
        case announce(topic: String, device: String)
        /// Another gateway kept announcing the topic after every repair: left as it is.
        case gaveUp(topic: String, device: String, bridge: String)
    }

    struct Entry: Sendable {
        let device: String
        /// The other bridge the broker's copy names; nil when it names this one (or was deleted).
        var foreign: String?
        var repairs = 0
        var lastRepair: Instant?
        var gaveUp = false
    }

    /// This gateway's bridge device (`<gateway_id>_bridge`).
    package let bridge: String
    package let settings: Settings
    private(set) var entries: [String: Entry] = [:]
    /// The devices this gateway owns and has announced.
    package private(set) var owned: Set<String> = []

    package init(bridge: String, settings: Settings = Settings()) {
        self.bridge = bridge
        self.settings = settings
    }

    /// The `via_device` of a config payload; nil when it is empty (deleted) or names none.
    package static func via(ofPayload payload: [UInt8]) -> String? {
        guard !payload.isEmpty, let value = try? JSONParser().parse(payload) else { return nil }
        return value["device"]?["via_device"]?.stringValue
    }

    /// A config of `device` arrived on `topic` (retained or live), naming `via` (nil: deleted).
    package mutating func received(topic: String, device: String, via: String?, at now: Instant) -> [Action] {
        var entry = entries[topic] ?? Entry(device: device)
        entry.foreign = via == bridge ? nil : via
        entries[topic] = entry
        return due(topic, at: now)
    }

    /// This gateway owns `device` and has announced it (true), or no longer owns it.
    package mutating func owning(_ device: String, _ owns: Bool, at now: Instant) {
        guard owns else {
            owned.remove(device)
            return
        }
        guard owned.insert(device).inserted else { return }
        for topic in entries.keys where entries[topic]?.device == device {
            entries[topic]?.gaveUp = false
            let foreign = entries[topic]?.foreign != nil
            entries[topic]?.repairs = foreign ? 1 : 0
            entries[topic]?.lastRepair = foreign ? now : nil
        }
    }

    /// Time passed (the timer armed for ``nextDeadline``).
    package mutating func tick(at now: Instant) -> [Action] {
        entries.keys.sorted().flatMap { due($0, at: now) }
    }

    /// When a repair waiting for its interval is due; nil when none waits.
    package var nextDeadline: Instant? {
        entries.values.compactMap { entry in
            guard let at = entry.lastRepair, waiting(entry) else { return nil }
            return at + wait(after: entry.repairs)
        }.min()
    }

    private func waiting(_ entry: Entry) -> Bool {
        owned.contains(entry.device) && entry.foreign != nil && entry.repairs < settings.maximumRepairs
    }

    /// The wait after the `repairs`-th repair: the interval, doubled for each one after the first.
    private func wait(after repairs: Int) -> Duration {
        settings.minimumInterval * (1 << max(0, min(repairs - 1, 16)))
    }

    private mutating func due(_ topic: String, at now: Instant) -> [Action] {
        guard var entry = entries[topic], owned.contains(entry.device), let foreign = entry.foreign else { return [] }
        guard entry.repairs < settings.maximumRepairs else {
            guard !entry.gaveUp else { return [] }
            entries[topic]?.gaveUp = true
            return [.gaveUp(topic: topic, device: entry.device, bridge: foreign)]
        }
        if let last = entry.lastRepair, now < last + wait(after: entry.repairs) { return [] }
        entry.repairs += 1
        entry.lastRepair = now
        entries[topic] = entry
        return [.announce(topic: topic, device: entry.device)]
    }
}
