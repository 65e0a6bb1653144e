import Bluetooth
import Decoders
import Foundation
import JSON
import Outbox
import Timekeeping

/// Turns decoded readings into what gets published: the device's merged state for the outbox,
/// the optional raw topic, and Home Assistant discovery for fields seen for the first time.
/// Pure: ``ReadingPipeline`` holds it under its lock, feeds it on the thread that received the
/// reading, and offers the returned entries to the publisher.
package struct ReadingRouter: Sendable {
    package struct Output: Sendable, Hashable {
        /// Entries for the outbox, in order.
        package var entries: [OutboxEntry]
        /// Discovery messages to publish (retained) because new fields appeared.
        package var discovery: [DiscoveryMessage]
    }

    package let topics: TopicContract
    package let qos: OutboxQoS
    package let rawTopics: Bool
    /// Nil when Home Assistant discovery is off.
    package private(set) var discoveryBuilder: DiscoveryBuilder?
    private var devices: [String: DiscoveryDevice]
    /// What one device's readings left: found with one lookup a reading (a lookup per map, with the
    /// device id hashed each time, cost more than the merge itself, issue 20).
    private struct Slot: Sendable {
        var state = DeviceState()
        /// The device's state topic, built once (a `String` built for every reading is an
        /// allocation, freed on another thread once published).
        let topic: String
        /// Field → (last value, unit, kind), for (re-)announcing discovery.
        var fields: [String: FieldInfo] = [:]
    }
    private typealias FieldInfo = (value: JSONValue, unit: String?, kind: FieldKind?)
    /// Per device that delivered a reading.
    private var slots: [String: Slot] = [:]

    package init(
        topics: TopicContract, qos: OutboxQoS, rawTopics: Bool, discoveryBuilder: DiscoveryBuilder?,
        devices: [DiscoveryDevice]
    ) {
        self.topics = topics
        self.qos = qos
        self.rawTopics = rawTopics
        self.discoveryBuilder = discoveryBuilder
        self.devices = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Replaces the device list and the discovery builder (configuration reload; nil: Home
    /// Assistant off); state of removed devices is dropped. Fields seen so far are announced by
    /// ``allDiscovery()`` with the new builder.
    package mutating func update(devices: [DiscoveryDevice], discoveryBuilder: DiscoveryBuilder?) {
        self.discoveryBuilder = discoveryBuilder
        var updated = Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // What the devices reported about themselves still holds.
        for (id, device) in self.devices {
            guard var new = updated[id] else { continue }
            new.manufacturer = new.manufacturer ?? device.manufacturer
            new.model = new.model ?? device.model
            new.firmware = new.firmware ?? device.firmware
            updated[id] = new
        }
        self.devices = updated
        slots = slots.filter { self.devices[$0.key] != nil }
    }

    /// Forgets the fields whose discovery topic is in `topics` (their entities are being deleted):
    /// they are announced again only when a reading brings them back.
    package mutating func forget(discoveryTopics topics: Set<String>) {
        guard let builder = discoveryBuilder else { return }
        for (deviceID, slot) in slots {
            guard let device = devices[deviceID] else { continue }
            slots[deviceID]?.fields = slot.fields.filter { name, value in
                guard
                    let message = builder.sensor(
                        device: device, field: name, sample: value.value, unit: value.unit, kind: value.kind)
                else { return true }
                return !topics.contains(message.topic)
            }
        }
    }

    /// Updates the address shown in discovery once the device is found.
    package mutating func setAddress(_ address: String, for deviceID: String) {
        devices[deviceID]?.address = address
    }

    /// What `deviceID` reported about itself (Device Information service): the discovery messages
    /// of its fields seen so far, announced again with the new `device` block, when it changed.
    package mutating func describe(
        _ deviceID: String, manufacturer: String?, model: String?, firmware: String?
    ) -> [DiscoveryMessage] {
        guard var device = devices[deviceID] else { return [] }
        device.manufacturer = manufacturer ?? device.manufacturer
        device.model = model ?? device.model
        device.firmware = firmware ?? device.firmware
        guard device != devices[deviceID] else { return [] }
        devices[deviceID] = device
        return discovery(deviceID: deviceID, fields: (slots[deviceID]?.fields ?? [:]).keys.sorted())
    }

    package func state(of deviceID: String) -> DeviceState? { slots[deviceID]?.state }

    /// Whether `deviceID` is a configured device.
    package func knows(_ deviceID: String) -> Bool { devices.index(forKey: deviceID) != nil }

    /// Routes one reading of `deviceID` taken at `sampleTime`.
    package mutating func route(
        device deviceID: String, fields: [DecodedField], raw: (characteristic: String, bytes: [UInt8])? = nil,
        rssi: Int? = nil, sampleTime: Date
    ) -> Output {
        var newFields: [String] = []
        // An advertisement that carries the firmware version (BTHome) names it for discovery.
        if case .string(let firmware)? = fields.first(where: { $0.name == "firmware_version" })?.value,
            devices[deviceID] != nil, devices[deviceID]?.firmware != firmware
        {
            devices[deviceID]?.firmware = firmware
            newFields = (slots[deviceID]?.fields ?? [:]).keys.sorted()
        }
        // The device's slot is changed in place, found with one lookup: a copy taken out and stored
        // back made every reading copy the device's fields and its field table (~3 µs a reading,
        // issue 20); a default naming `topics` captured `self` while `slots` was being changed, so
        // Swift copied the whole router (a retain and a release of each member); and testing
        // `slots[id] == nil` copied the slot out as an optional (1 % of the notify thread).
        let slot: Dictionary<String, Slot>.Index
        if let found = slots.index(forKey: deviceID) {
            slot = found
        } else {
            slots[deviceID] = Slot(topic: topics.device(deviceID))
            slot = slots.index(forKey: deviceID)!
        }
        let (topic, payload) = Self.merge(
            into: &slots.values[slot], fields: fields, rssi: rssi, sampleTime: sampleTime, newFields: &newFields)
        var entries = [
            OutboxEntry(
                topic: topic, payload: payload, qos: qos, retain: false, sampleTime: sampleTime, stream: deviceID)
        ]
        if rawTopics, let raw {
            let payload: JSONValue = .object([
                JSONMember("value", .string(Hex.string(raw.bytes))),
                JSONMember("ts", .string(Timestamp.iso8601(sampleTime))),
            ])
            entries.append(
                OutboxEntry(
                    topic: topics.raw(deviceID, characteristic: raw.characteristic), payload: payload.bytes, qos: qos,
                    retain: false, sampleTime: sampleTime, stream: deviceID))
        }
        return Output(entries: entries, discovery: discovery(deviceID: deviceID, fields: newFields))
    }

    /// Merges a reading into `slot`; returns its state topic and payload.
    private static func merge(
        into slot: inout Slot, fields: [DecodedField], rssi: Int?, sampleTime: Date, newFields: inout [String]
    ) -> (topic: String, payload: [UInt8]) {
        slot.state.merge(fields, rssi: rssi, sampleTime: sampleTime)
        note(fields, rssi: rssi, in: &slot.fields, newFields: &newFields)
        return (slot.topic, slot.state.payload)
    }

    /// Records the latest value, unit and kind of each field (and the RSSI) in a device's field
    /// table; names seen for the first time are appended to `newFields`.
    private static func note(
        _ fields: [DecodedField], rssi: Int?,
        in info: inout [String: FieldInfo], newFields: inout [String]
    ) {
        for field in fields where field.name != "ts" {
            if info[field.name] == nil { newFields.append(field.name) }
            info[field.name] = (JSONValue(field.value), field.unit, field.kind)
        }
        if let rssi {
            if info["rssi"] == nil { newFields.append("rssi") }
            info["rssi"] = (.int(Int64(rssi)), "dBm", nil)
        }
    }

    private func discovery(deviceID: String, fields: [String]) -> [DiscoveryMessage] {
        guard !fields.isEmpty, let builder = discoveryBuilder, let device = devices[deviceID],
            let info = slots[deviceID]?.fields
        else {
            return []
        }
        return fields.compactMap { name in
            info[name].flatMap {
                builder.sensor(device: device, field: name, sample: $0.value, unit: $0.unit, kind: $0.kind)
            }
        }
    }

    /// The discovery messages of one device's fields seen so far (announced again when this
    /// gateway becomes its owner, shared-broker mode).
    package func discovery(of deviceID: String) -> [DiscoveryMessage] {
        discovery(deviceID: deviceID, fields: (slots[deviceID]?.fields ?? [:]).keys.sorted())
    }

    /// Every discovery message for the fields seen so far (sent again when Home Assistant
    /// comes online).
    package func allDiscovery() -> [DiscoveryMessage] {
        slots.keys.sorted().flatMap { deviceID in
            discovery(deviceID: deviceID, fields: (slots[deviceID]?.fields ?? [:]).keys.sorted())
        }
    }
}
