import Bluetooth
import Foundation
import JSON
import Outbox

/// The gateway's persistent state, kept in the outbox database next to the queue: known
/// peripherals and the Home Assistant discovery topics it announced (so entities of devices
/// removed from the configuration can be deleted, even after a restart).
package struct GatewayStateStore: Sendable {
    package let store: OutboxStore
    private let parser = JSONParser()

    package init(store: OutboxStore) {
        self.store = store
    }

    package func knownPeripherals() async throws -> [KnownPeripheral] {
        try await store.stateValues(prefix: KnownPeripheral.keyPrefix).compactMap { row in
            (try? parser.parse(row.value)).flatMap(KnownPeripheral.init(json:))
        }
    }

    package func remember(_ peripheral: KnownPeripheral) async throws {
        try await store.setStateValue(peripheral.json.bytes, forKey: KnownPeripheral.key(peripheral.deviceID))
    }

    package func forget(deviceID: String) async throws {
        try await store.removeStateValue(forKey: KnownPeripheral.key(deviceID))
        try await store.removeStateValue(forKey: Self.discoveryKey(deviceID))
        try await store.removeStateValue(forKey: Self.sourcesKey(deviceID))
        try await store.removeStateValue(forKey: Self.adoptedKey(deviceID))
        try await store.removeStateValue(forKey: Self.matchKey(deviceID))
        try await store.removeStateValue(forKey: Self.autoKey(deviceID))
        try await store.removeStateValue(forKey: Self.adoptedDeviceKey(deviceID))
    }

    static let adoptedDevicePrefix = "adopted-devices/"

    static func adoptedDeviceKey(_ deviceID: String) -> String { adoptedDevicePrefix + deviceID }

    /// ``AdoptedDevices/entries``: `{"address":…,"decoder":…,"name":…,"bind_key":"<32 hex>"}` per
    /// id (`bind_key` only when one was given).
    package func adoptedDevices() async throws -> [String: AdoptedDevices.Entry] {
        var entries: [String: AdoptedDevices.Entry] = [:]
        for row in try await store.stateValues(prefix: Self.adoptedDevicePrefix) {
            guard let value = try? parser.parse(row.value), let address = value["address"]?.stringValue,
                let decoder = value["decoder"]?.stringValue, let name = value["name"]?.stringValue
            else { continue }
            entries[String(row.key.dropFirst(Self.adoptedDevicePrefix.count))] = AdoptedDevices.Entry(
                address: address, decoder: decoder, name: name,
                bindKey: value["bind_key"]?.stringValue.flatMap(Hex.bytes))
        }
        return entries
    }

    package func setAdoptedDevice(_ entry: AdoptedDevices.Entry, id: String) async throws {
        var members = [
            JSONMember("address", .string(entry.address)), JSONMember("decoder", .string(entry.decoder)),
            JSONMember("name", .string(entry.name)),
        ]
        if let key = entry.bindKey { members.append(JSONMember("bind_key", .string(Hex.string(key)))) }
        try await store.setStateValue(JSONValue.object(members).bytes, forKey: Self.adoptedDeviceKey(id))
    }

    /// Deletes the adoption of `id` (and nothing else of it: a configured device may have that id).
    package func removeAdoptedDevice(id: String) async throws {
        try await store.removeStateValue(forKey: Self.adoptedDeviceKey(id))
    }

    /// Deletes the automatic device `id` (adopted, or removed over MQTT).
    package func removeAutoDevice(id: String) async throws {
        try await store.removeStateValue(forKey: Self.autoKey(id))
    }

    static let autoPrefix = "auto-devices/"

    static func autoKey(_ deviceID: String) -> String { autoPrefix + deviceID }

    /// ``AutoDevices/entries``: `{"address":…,"decoder":…,"last_seen":<seconds since 1970>,"name":…}`
    /// per id (`name` only when known).
    package func autoDevices() async throws -> [String: AutoDevices.Entry] {
        var entries: [String: AutoDevices.Entry] = [:]
        for row in try await store.stateValues(prefix: Self.autoPrefix) {
            guard let members = (try? parser.parse(row.value))?.objectMembers else { continue }
            var fields: [String: JSONValue] = [:]
            for member in members { fields[member.key] = member.value }
            guard let address = fields["address"]?.stringValue, let decoder = fields["decoder"]?.stringValue else {
                continue
            }
            let seconds = fields["last_seen"]?.intValue ?? 0
            entries[String(row.key.dropFirst(Self.autoPrefix.count))] = AutoDevices.Entry(
                address: address, decoder: decoder, lastSeen: Date(timeIntervalSince1970: TimeInterval(seconds)),
                name: fields["name"]?.stringValue)
        }
        return entries
    }

    package func setAutoDevice(_ entry: AutoDevices.Entry, id: String) async throws {
        let value: JSONValue = .object(
            [
                JSONMember("address", .string(entry.address)),
                JSONMember("decoder", .string(entry.decoder)),
                JSONMember("last_seen", .int(Int64(entry.lastSeen.timeIntervalSince1970))),
            ] + (entry.name.map { [JSONMember("name", .string($0))] } ?? []))
        try await store.setStateValue(value.bytes, forKey: Self.autoKey(id))
    }

    static let matchPrefix = "match-instances/"

    static func matchKey(_ deviceID: String) -> String { matchPrefix + deviceID }

    /// ``MatchInstances/bindings``: per device whose match has no address, the fixed addresses it
    /// caught in the order first seen (`["A4:C1:38:00:00:01",…]`).
    package func matchBindings() async throws -> [String: [String]] {
        var bindings: [String: [String]] = [:]
        for row in try await store.stateValues(prefix: Self.matchPrefix) {
            guard case .array(let addresses) = try? parser.parse(row.value) else { continue }
            bindings[String(row.key.dropFirst(Self.matchPrefix.count))] = addresses.compactMap(\.stringValue)
        }
        return bindings
    }

    package func setMatchBindings(_ addresses: [String], deviceID: String) async throws {
        try await store.setStateValue(
            JSONValue.array(addresses.map { .string($0) }).bytes, forKey: Self.matchKey(deviceID))
    }

    static func discoveryKey(_ deviceID: String) -> String { "discovery/\(deviceID)" }

    /// Discovery config topics announced per device.
    package func announcedDiscovery() async throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for row in try await store.stateValues(prefix: "discovery/") {
            guard case .array(let topics) = try? parser.parse(row.value) else { continue }
            result[String(row.key.dropFirst("discovery/".count))] = topics.compactMap(\.stringValue)
        }
        return result
    }

    package func setAnnouncedDiscovery(_ topics: [String], deviceID: String) async throws {
        try await store.setStateValue(
            JSONValue.array(topics.map { .string($0) }).bytes, forKey: Self.discoveryKey(deviceID))
    }

    static let sourcesPrefix = "discovery-sources/"

    static func sourcesKey(_ deviceID: String) -> String { sourcesPrefix + deviceID }

    /// What produced the announced field entities, per device (`{"<topic>":["2a19"],…}`).
    package func discoverySources() async throws -> DiscoverySources {
        var devices: [String: [String: Set<String>]] = [:]
        for row in try await store.stateValues(prefix: Self.sourcesPrefix) {
            guard let members = (try? parser.parse(row.value))?.objectMembers else { continue }
            var topics: [String: Set<String>] = [:]
            for member in members {
                guard case .array(let sources) = member.value else { continue }
                topics[member.key] = Set(sources.compactMap(\.stringValue))
            }
            devices[String(row.key.dropFirst(Self.sourcesPrefix.count))] = topics
        }
        return DiscoverySources(devices)
    }

    package func setDiscoverySources(_ sources: DiscoverySources, deviceID: String) async throws {
        let topics = (sources.devices[deviceID] ?? [:]).sorted { $0.key < $1.key }
        let members = topics.map { JSONMember($0.key, .array($0.value.sorted().map { .string($0) })) }
        try await store.setStateValue(JSONValue.object(members).bytes, forKey: Self.sourcesKey(deviceID))
    }
}

/// The address each configured device was last bound to (for `bridge/event` `device_adopted`).
extension GatewayStateStore {
    static func adoptedKey(_ deviceID: String) -> String { "adopted/\(deviceID)" }

    package func adoptedAddress(deviceID: String) async throws -> String? {
        let rows = try await store.stateValues(prefix: Self.adoptedKey(deviceID))
        return rows.first { $0.key == Self.adoptedKey(deviceID) }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    package func setAdoptedAddress(_ address: String, deviceID: String) async throws {
        try await store.setStateValue(Array(address.utf8), forKey: Self.adoptedKey(deviceID))
    }
}
