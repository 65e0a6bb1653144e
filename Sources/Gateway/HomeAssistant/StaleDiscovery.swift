import Bluetooth
import Configuration

/// Finds Home Assistant entities announced under a field name the gateway no longer uses, so
/// they can be deleted (empty retained config) instead of lingering in Home Assistant.
///
/// Earlier versions named the field of a colliding characteristic `<field>_<characteristic>`
/// (`temperature_intermediate_temperature`), later `<service>_<field>`
/// (`environmental_sensing_temperature`); ``FieldNamer`` now names it after the characteristic
/// (`intermediate_temperature`) or what its service measures (`body_temperature`).
/// Fields appear only once a value was decoded, so "no longer announced" cannot be read off the
/// fields seen so far. Instead a topic is stale only when the configuration rules out every
/// current name for it; anything else is kept. `<service>_<field>` of a service FieldNamer now
/// qualifies by what it measures (Health Thermometer, Environmental Sensing) is stale when a
/// subscribed characteristic owns `<field>`; otherwise:
/// - its object id is `<field>_<characteristic>` for a characteristic the device subscribes to,
///   where a subscribed characteristic owns `<field>` (is named `<field>` or
///   `<field>_measurement`: the collision that earned the old name), and none of the device's
///   subscriptions can still be named that way (``FieldNamer``'s last resort,
///   `<field>_<characteristic>`, is impossible when the characteristic name ends with
///   `_<field>`, or when the service holding it has an assigned name: the subscription names
///   such a service, or every service the device resolved when it last connected has one);
/// - it is not named like a subscribed characteristic (the first choice for a qualified name)
///   nor like `<assigned service name>_…` (the second);
/// - it is not announced now (controls, bridge entities, fields seen in this run).
///
/// Not a proof in one case: a decoder or layout whose own field name is `<field>_<characteristic>`
/// with both parts subscribed on the same device (`humidity_pressure`) would be taken for an old
/// name; its entity is announced again with its first value in the run.
package enum StaleDiscovery {
    /// The topics of `announced` (per device id) to delete. Devices no longer configured are
    /// left to the whole-device removal; `live` holds every topic the gateway announces now;
    /// `resolvedServices` the services each device had when it last connected (state database).
    package static func topics(
        announced: [String: [String]], configuration: BridgeConfiguration, live: Set<String>,
        resolvedServices: [String: [BluetoothUUID]] = [:]
    ) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for device in configuration.devices {
            let services = resolvedServices[device.id] ?? []
            let allNamed = !services.isEmpty && services.allSatisfy { AssignedNumbers.serviceName(for: $0) != nil }
            let stale = (announced[device.id] ?? []).filter { topic in
                guard !live.contains(topic), let objectID = objectID(of: topic) else { return false }
                return isStale(objectID, subscriptions: device.subscribe, servicesAllNamed: allNamed)
            }
            if !stale.isEmpty { result[device.id] = stale }
        }
        return result
    }

    /// `homeassistant/<component>/<node>/<object>/config` → `<object>`.
    static func objectID(of topic: String) -> String? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts.last == "config" else { return nil }
        return String(parts[parts.count - 2])
    }

    static func isStale(_ objectID: String, subscriptions: [Subscription], servicesAllNamed: Bool) -> Bool {
        let names = subscriptions.map { DiscoveryBuilder.sanitize(FieldNamer.characteristicName($0.characteristic)) }
        // Named like a characteristic: FieldNamer's first choice for a qualified name.
        guard !names.contains(objectID) else { return false }
        // `<service>_<field>` of a service FieldNamer now names by what it measures
        // (`environmental_sensing_temperature` is now `ambient_temperature`, or `temperature` when
        // the configuration names Environmental Sensing's Temperature): an old name when a
        // subscribed characteristic owns `<field>` (the collision that earned it).
        if let service = FieldNamer.serviceQualifiers.keys.first(where: { objectID.hasPrefix($0 + "_") }) {
            let field = String(objectID.dropFirst(service.count + 1))
            return names.contains { FieldNamer.owns($0, field) }
        }
        // `<qualifier>_<field>` and `<service>_<field>`: FieldNamer's second and third choices.
        guard !FieldNamer.serviceQualifiers.values.contains(where: { objectID.hasPrefix($0 + "_") }) else {
            return false
        }
        guard !AssignedNumbers.services.contains(where: { objectID.hasPrefix($0.name + "_") }) else { return false }
        var matched = false
        for (subscription, name) in zip(subscriptions, names) where objectID.hasSuffix("_" + name) {
            let field = String(objectID.dropLast(name.count + 1))
            guard !field.isEmpty else { continue }
            if canBeNamedLastResort(
                field: field, characteristic: name, service: subscription.service, servicesAllNamed: servicesAllNamed)
            {
                return false
            }
            // The old name was given only to a field two characteristics produced; one of them
            // is normally the field's owner (`body_temperature` of a layout is no old name).
            if names.contains(where: { FieldNamer.owns($0, field) }) { matched = true }
        }
        return matched
    }

    /// Whether ``FieldNamer`` may name `field` of this subscription `<field>_<characteristic>`.
    static func canBeNamedLastResort(
        field: String, characteristic: String, service: BluetoothUUID?, servicesAllNamed: Bool
    ) -> Bool {
        if characteristic.hasSuffix("_" + field), !FieldNamer.owns(characteristic, field) { return false }
        if let service { return AssignedNumbers.serviceName(for: service) == nil }
        return !servicesAllNamed
    }
}
