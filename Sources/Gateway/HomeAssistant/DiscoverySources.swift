import Bluetooth
import Configuration

/// What produced each field entity the gateway announced: per device, discovery topic → the
/// short UUIDs of the characteristics whose readings produced the field, or
/// ``advertisement``. Recorded when a field first appears in a run, kept across runs (state
/// database), so the entities of a characteristic dropped from a `subscribe` list can be deleted
/// once the configuration proves nothing can produce them any more (``droppedTopics(announced:configuration:live:)``).
package struct DiscoverySources: Sendable, Equatable {
    /// The source of fields decoded from advertisements.
    package static let advertisement = "advertisement"

    package private(set) var devices: [String: [String: Set<String>]]

    package init(_ devices: [String: [String: Set<String>]] = [:]) {
        self.devices = devices
    }

    /// Records `source` (nil: an advertisement) for `topics` of `device`; true when something was new.
    package mutating func record(_ topics: [String], device: String, source: String?) -> Bool {
        var changed = false
        for topic in topics
        where devices[device, default: [:]][topic, default: []].insert(
            source ?? Self.advertisement
        ).inserted {
            changed = true
        }
        return changed
    }

    /// Forgets `topics` of `device` (their entities were deleted); true when one was known.
    package mutating func forget(_ topics: Set<String>, device: String) -> Bool {
        let before = devices[device]?.count ?? 0
        devices[device] = devices[device]?.filter { !topics.contains($0.key) }
        return (devices[device]?.count ?? 0) != before
    }

    package mutating func forget(device: String) {
        devices[device] = nil
    }

    /// The announced topics (per configured device) to delete because every source recorded for
    /// them is a characteristic the configuration no longer reads. A topic is kept when:
    /// - it is in `live` (announced now by something else: controls, bridge entities), or has no
    ///   recorded source (announced by an earlier version);
    /// - the device decodes advertisements (they may produce any field name);
    /// - one of its sources is still read: subscribed (any mode), a command that allows `read`,
    ///   or (raw GATT on) an allowlist entry with `read` or `notify`;
    /// - a characteristic still subscribed may take its name: it owns the name (is named like
    ///   it, or like it plus `_measurement`), or it produced the same field under a qualified name
    ///   (`<characteristic>`, `<service>_<field>`, `body_<field>`, `<field>_<characteristic>`), which becomes the
    ///   plain name once the characteristic that held it is gone.
    ///
    /// Not a proof in one case: a subscription that has never delivered the field in any run
    /// and decodes to the same name would take it over after its holder is dropped; its
    /// entity is announced again with its first value.
    package func droppedTopics(
        announced: [String: [String]], configuration: BridgeConfiguration, live: Set<String>
    ) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for device in configuration.devices where device.advertisement == nil {
            guard let recorded = devices[device.id] else { continue }
            let read = Self.readCharacteristics(device, rawGATT: configuration.commands.rawGATT)
            let subscribed = device.subscribe.map {
                (
                    uuid: $0.characteristic.shortString,
                    name: DiscoveryBuilder.sanitize(FieldNamer.characteristicName($0.characteristic))
                )
            }
            let dropped = (announced[device.id] ?? []).filter { topic in
                guard !live.contains(topic), let sources = recorded[topic], !sources.isEmpty,
                    sources.isDisjoint(with: read), !sources.contains(Self.advertisement),
                    let field = StaleDiscovery.objectID(of: topic)
                else { return false }
                return !subscribed.contains { characteristic in
                    if FieldNamer.owns(characteristic.name, field) { return true }
                    return recorded.contains { other, sources in
                        guard sources.contains(characteristic.uuid), let name = StaleDiscovery.objectID(of: other)
                        else {
                            return false
                        }
                        return Self.qualifies(name, field: field, characteristic: characteristic.name)
                    }
                }
            }
            if !dropped.isEmpty { result[device.id] = dropped }
        }
        return result
    }

    /// The short UUIDs of the characteristics the gateway may still read on `device`.
    static func readCharacteristics(_ device: DeviceConfiguration, rawGATT: RawGATTSettings) -> Set<String> {
        var read = Set(device.subscribe.map(\.characteristic.shortString))
        for command in device.commands where command.operations.contains(.read) {
            read.insert(command.characteristic.shortString)
        }
        if rawGATT.enabled {
            for rule in rawGATT.allow
            where rule.device == device.id && (rule.operations.contains(.read) || rule.operations.contains(.notify)) {
                read.insert(rule.characteristic.shortString)
            }
        }
        return read
    }

    /// Whether `name` is one of ``FieldNamer``'s qualified names for `field` of `characteristic`.
    static func qualifies(_ name: String, field: String, characteristic: String) -> Bool {
        if name == characteristic, characteristic.hasSuffix("_" + field) { return true }
        if name == field + "_" + characteristic { return true }
        guard name.hasSuffix("_" + field) else { return false }
        let service = String(name.dropLast(field.count + 1))
        return AssignedNumbers.services.contains { $0.name == service }
            || FieldNamer.serviceQualifiers.values.contains(service)
    }
}
