import Decoders
import JSON

/// Builds Home Assistant MQTT discovery messages for the gateway's devices.
///
/// Every entity's availability is tied to the bridge AND the device (`availability` list with
/// `availability_mode: all`): it shows unavailable when the gateway is offline or the device
/// is out of reach.
///
/// Ids: a device's node id, its entities' unique ids and its `device` identifier start with the
/// ``deviceScope``: the `gateway_id` in single-gateway mode (`<gateway_id>_<device>_<field>`, as
/// always), the base topic in shared-broker mode (`<base>_<device>_<field>`: every gateway of the
/// installation announces one Home Assistant device under the same ids, docs/multi-gateway.md,
/// "Home Assistant: one device"). `via_device` is always this gateway's bridge device: in
/// shared-broker mode only the device's owner announces it.
/// The bridge's own entities (`<gateway_id>_bridge_…`) are per gateway in both modes.
package struct DiscoveryBuilder: Sendable {
    package let topics: TopicContract
    package let gatewayID: String
    /// What a device's ids start with: the base topic in shared-broker mode, else the gateway id.
    package var deviceScope: String { topics.sharedGatewayID == nil ? gatewayID : topics.base }
    /// Device availability is `{"state":"online"}` (`mqtt.json_availability`), read with a template.
    package let jsonAvailability: Bool

    package init(topics: TopicContract, gatewayID: String, jsonAvailability: Bool = false) {
        self.topics = topics
        self.gatewayID = gatewayID
        self.jsonAvailability = jsonAvailability
    }

    /// Topic segments and entity ids only contain `[a-zA-Z0-9_-]`.
    static func sanitize(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }

    func uniqueID(_ device: DiscoveryDevice, _ field: String) -> String {
        "\(nodeID(device.id))_\(Self.sanitize(field))"
    }

    func nodeID(_ device: DiscoveryDevice) -> String { nodeID(device.id) }

    /// The node id of device `id` (the third level of its config topics, and its `device` identifier).
    package func nodeID(_ id: String) -> String { "\(Self.sanitize(deviceScope))_\(Self.sanitize(id))" }

    /// Shared-broker mode: of `announced` (config topics per device id), those of `devices` under
    /// this gateway's single-gateway ids (`<gateway_id>_<device>`), deleted once the mode is on so
    /// Home Assistant keeps no duplicate device. None without the mode (single-gateway behaviour
    /// is unchanged), and none when the gateway id and the base topic sanitize alike (both
    /// schemes give the same topics).
    package func singleGatewayTopics(_ announced: [String: [String]], devices: [String]) -> [String: [String]] {
        guard topics.sharedGatewayID != nil else { return [:] }
        var result: [String: [String]] = [:]
        for id in devices {
            let old = "\(Self.sanitize(gatewayID))_\(Self.sanitize(id))"
            guard old != nodeID(id) else { continue }
            let stale = (announced[id] ?? []).filter { Self.nodeID(ofTopic: $0) == old }
            if !stale.isEmpty { result[id] = stale }
        }
        return result
    }

    /// The node id of a config topic (`<prefix>/<component>/<node>/<object>/config`), nil for another topic.
    package static func nodeID(ofTopic topic: String) -> String? {
        let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts.last == "config" else { return nil }
        return String(parts[parts.count - 3])
    }

    var availability: JSONValue {
        .array([
            .object([
                JSONMember("topic", .string(topics.bridgeState)),
                JSONMember("value_template", "{{ value_json.state }}"),
            ])
        ])
    }

    func availability(for device: DiscoveryDevice) -> JSONValue {
        guard case .array(var list) = availability else { return availability }
        var entry = [JSONMember("topic", .string(topics.availability(device.id)))]
        if jsonAvailability { entry.append(JSONMember("value_template", "{{ value_json.state }}")) }
        list.append(.object(entry))
        return .array(list)
    }

    /// The `device` block: `connections` with the Bluetooth address as Home Assistant's own
    /// Bluetooth integrations write it (so their device and this one merge), and the manufacturer,
    /// model and firmware the device reported (Device Information service) or its advertisement
    /// format implies; none of them when unknown.
    func deviceBlock(_ device: DiscoveryDevice) -> JSONValue {
        var members: [JSONMember] = [
            JSONMember("identifiers", .array([.string(nodeID(device))])),
            JSONMember("name", .string(device.name)),
        ]
        if let address = device.address {
            members.append(JSONMember("connections", .array([.array(["bluetooth", .string(address.uppercased())])])))
        }
        if let manufacturer = device.manufacturer { members.append(JSONMember("manufacturer", .string(manufacturer))) }
        if let model = device.model { members.append(JSONMember("model", .string(model))) }
        if let firmware = device.firmware { members.append(JSONMember("sw_version", .string(firmware))) }
        members.append(JSONMember("via_device", .string("\(Self.sanitize(gatewayID))_bridge")))
        return .object(members)
    }

    /// The `origin` block every payload carries: what announced the entity.
    static let origin: JSONValue = .object([
        JSONMember("name", "BLEBridge"), JSONMember("sw_version", .string(BLEBridgeVersion.string)),
    ])

    /// `default_entity_id`: the entity id Home Assistant gives a new entity
    /// (`sensor.thermometer_temperature`; lowercase letters, digits and `_` only).
    static func defaultEntityID(component: String, _ objectID: String) -> JSONMember {
        let slug = String(objectID.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        return JSONMember("default_entity_id", .string("\(component).\(slug)"))
    }

    /// The discovery message of one decoded field, or nil when the field is not an entity.
    package func sensor(
        device: DiscoveryDevice, field: String, sample: JSONValue, unit: String?, kind: FieldKind? = nil
    ) -> DiscoveryMessage? {
        guard let classification = FieldClassification.classify(name: field, value: sample, unit: unit, kind: kind)
        else {
            return nil
        }
        let objectID = Self.sanitize(field)
        var members: [JSONMember] = [
            JSONMember("name", .string(Self.displayName(field))),
            JSONMember("unique_id", .string(uniqueID(device, field))),
            Self.defaultEntityID(component: classification.component, "\(Self.sanitize(device.id))_\(objectID)"),
            JSONMember("state_topic", .string(topics.device(device.id))),
        ]
        if classification.component == "binary_sensor" {
            members.append(JSONMember("value_template", .string("{{ 'ON' if value_json.\(field) else 'OFF' }}")))
        } else if classification.component == "event", let kind {
            // The field is in the state only with the reading that carried the event; a state
            // without it renders empty, which Home Assistant ignores (no event).
            members.append(JSONMember("value_template", .string(Self.eventTemplate(field))))
            members.append(JSONMember("event_types", .array(kind.eventTypes.map { .string($0) })))
        } else {
            members.append(JSONMember("value_template", .string("{{ value_json.\(field) }}")))
        }
        if let deviceClass = classification.deviceClass {
            members.append(JSONMember("device_class", .string(deviceClass)))
        }
        if let unit = classification.unit { members.append(JSONMember("unit_of_measurement", .string(unit))) }
        if let stateClass = classification.stateClass { members.append(JSONMember("state_class", .string(stateClass))) }
        if let icon = classification.icon { members.append(JSONMember("icon", .string(icon))) }
        if let category = classification.entityCategory {
            members.append(JSONMember("entity_category", .string(category)))
        }
        if !classification.enabledByDefault { members.append(JSONMember("enabled_by_default", false)) }
        members.append(JSONMember("availability", availability(for: device)))
        members.append(JSONMember("availability_mode", "all"))
        members.append(JSONMember("origin", Self.origin))
        members.append(JSONMember("device", deviceBlock(device)))
        let topic = topics.discovery(component: classification.component, nodeID: nodeID(device), objectID: objectID)
        return DiscoveryMessage(topic: topic, payload: JSONValue.object(members).bytes, device: device.id)
    }

    /// Room presence (docs/multi-gateway.md, "Room presence"): the device's room as a `sensor`
    /// reading `<base>/<device>/room` (`not_home` when no gateway hears it), with the nearest
    /// gateway as an attribute. Its availability is the bridge's alone: a device out of reach is
    /// `not_home`, not unavailable.
    package func room(device: DiscoveryDevice) -> DiscoveryMessage {
        let members: [JSONMember] = [
            JSONMember("name", "Room"),
            JSONMember("unique_id", .string(uniqueID(device, "room"))),
            Self.defaultEntityID(component: "sensor", "\(Self.sanitize(device.id))_room"),
            JSONMember("state_topic", .string(topics.room(device.id))),
            JSONMember("value_template", "{{ value_json.room }}"),
            JSONMember("json_attributes_topic", .string(topics.room(device.id))),
            JSONMember("icon", "mdi:map-marker"),
            JSONMember("availability", availability),
            JSONMember("origin", Self.origin),
            JSONMember("device", deviceBlock(device)),
        ]
        let topic = topics.discovery(component: "sensor", nodeID: nodeID(device), objectID: "room")
        return DiscoveryMessage(topic: topic, payload: JSONValue.object(members).bytes, device: device.id)
    }

    /// An event entity's template: `{"event_type":"press"}` when the state carries the field (and
    /// it names an event), else nothing.
    static func eventTemplate(_ field: String) -> String {
        "{% if value_json.\(field) is defined and value_json.\(field) is string and value_json.\(field) != 'none' %}"
            + "{\"event_type\":\"{{ value_json.\(field) }}\"}{% endif %}"
    }

    /// The discovery message of a writable named command: `switch` for booleans, `number` for
    /// integers, `select` for alert levels; nil for formats Home Assistant cannot drive.
    ///
    /// `stateful`: the command's characteristic is subscribed (notified, indicated or polled), so
    /// its value, decoded with the command's format, is in the device's state under the
    /// command's name; the control then shows that state (`state_topic`, `value_template`).
    /// Otherwise nothing reports the value and Home Assistant keeps it optimistically.
    package func control(device: DiscoveryDevice, command: NamedCommand, stateful: Bool) -> DiscoveryMessage? {
        guard command.operations.contains(.write) else { return nil }
        let name = command.name
        let component: String
        var extra: [JSONMember] = []
        switch command.format.kind {
        case .bool:
            component = "switch"
            extra = [
                JSONMember("payload_on", .string(JSONValue.object([JSONMember(name, true)]).serialized)),
                JSONMember("payload_off", .string(JSONValue.object([JSONMember(name, false)]).serialized)),
            ]
            if stateful {
                extra += [
                    JSONMember("value_template", .string("{{ 'ON' if value_json.\(name) else 'OFF' }}")),
                    JSONMember("state_on", "ON"), JSONMember("state_off", "OFF"),
                ]
            }
        case .uint8, .uint16, .uint32, .int8, .int16, .int32:
            component = "number"
            let bounds: [ValueFormat.Kind: (Int64, Int64)] = [
                .uint8: (0, 255), .uint16: (0, 65535), .uint32: (0, 4_294_967_295), .int8: (-128, 127),
                .int16: (-32768, 32767), .int32: (-2_147_483_648, 2_147_483_647),
            ]
            let (low, high) = bounds[command.format.kind] ?? (0, 255)
            extra = [JSONMember("command_template", .string("{\"\(name)\": {{ value | int }}}"))]
            if stateful { extra.append(JSONMember("value_template", .string("{{ value_json.\(name) }}"))) }
            extra += [
                JSONMember("min", .int(max(low, command.format.minimum ?? low))),
                JSONMember("max", .int(min(high, command.format.maximum ?? high))),
                JSONMember("mode", "slider"),
            ]
        case .alertLevel:
            component = "select"
            extra = [
                JSONMember("options", ["none", "mild", "high"]),
                JSONMember("command_template", .string("{\"\(name)\": \"{{ value }}\"}")),
            ]
            if stateful { extra.append(JSONMember("value_template", .string("{{ value_json.\(name) }}"))) }
        case .hex, .utf8, .layout:
            return nil
        }
        var members: [JSONMember] = [
            JSONMember("name", .string(Self.displayName(name))),
            JSONMember("unique_id", .string(uniqueID(device, name))),
            Self.defaultEntityID(component: component, "\(Self.sanitize(device.id))_\(Self.sanitize(name))"),
            JSONMember("command_topic", .string(topics.set(device.id))),
        ]
        if stateful { members.append(JSONMember("state_topic", .string(topics.device(device.id)))) }
        members += extra
        members.append(JSONMember("availability", availability(for: device)))
        members.append(JSONMember("availability_mode", "all"))
        members.append(JSONMember("origin", Self.origin))
        members.append(JSONMember("device", deviceBlock(device)))
        let topic = topics.discovery(component: component, nodeID: nodeID(device), objectID: Self.sanitize(name))
        return DiscoveryMessage(topic: topic, payload: JSONValue.object(members).bytes, device: device.id)
    }

    /// The bridge's own diagnostic entities from `bridge/health`: connections, outbox depth and
    /// dropped readings, an "Outbox" problem sensor that is on while the outbox refuses writes, and a
    /// "Bluetooth" problem sensor that is on while Bluetooth is unusable (`bridge/health` `bluetooth`,
    /// whose members become its attributes).
    package func bridgeEntities() -> [DiscoveryMessage] {
        let node = "\(Self.sanitize(gatewayID))_bridge"
        let block: JSONValue = .object([
            JSONMember("identifiers", .array([.string(node)])),
            JSONMember("name", .string("BLEBridge \(gatewayID)")),
            JSONMember("manufacturer", "BLEBridge"),
            JSONMember("sw_version", .string(BLEBridgeVersion.string)),
        ])
        // `dropped` only grows while the gateway runs (a restart starts it at 0 again, which
        // `total_increasing` reads as a new cycle); the others go up and down.
        let sensors = [
            ("connections", "measurement"), ("outbox_depth", "measurement"), ("dropped", "total_increasing"),
        ]
        .map { (field: String, stateClass: String) -> DiscoveryMessage in
            let members: [JSONMember] = [
                JSONMember("name", .string(Self.displayName(field))),
                JSONMember("unique_id", .string("\(node)_\(field)")),
                Self.defaultEntityID(component: "sensor", "\(node)_\(field)"),
                JSONMember("state_topic", .string(topics.bridgeHealth)),
                JSONMember("value_template", .string("{{ value_json.\(field) }}")),
                JSONMember("state_class", .string(stateClass)),
                JSONMember("entity_category", "diagnostic"),
                JSONMember("enabled_by_default", false),
                JSONMember("availability", availability),
                JSONMember("origin", Self.origin),
                JSONMember("device", block),
            ]
            return DiscoveryMessage(
                topic: topics.discovery(component: "sensor", nodeID: node, objectID: field),
                payload: JSONValue.object(members).bytes)
        }
        return sensors + [
            problemSensor(
                node: node, device: block, name: "Outbox", objectID: "outbox_error",
                state: "{{ 'ON' if value_json.outbox_error else 'OFF' }}",
                attributes: "{{ {'outbox_error': value_json.outbox_error} | tojson }}"),
            problemSensor(
                node: node, device: block, name: "Bluetooth", objectID: "bluetooth",
                state: "{{ 'OFF' if value_json.bluetooth.available else 'ON' }}",
                attributes: "{{ value_json.bluetooth | tojson }}"),
        ]
    }

    /// A diagnostic `problem` binary sensor of the bridge device, on `bridge/health`: `state` and
    /// `attributes` are its value and attributes templates.
    private func problemSensor(
        node: String, device: JSONValue, name: String, objectID: String, state: String, attributes: String
    ) -> DiscoveryMessage {
        let members: [JSONMember] = [
            JSONMember("name", .string(name)),
            JSONMember("unique_id", .string("\(node)_\(objectID)")),
            Self.defaultEntityID(component: "binary_sensor", "\(node)_\(objectID)"),
            JSONMember("state_topic", .string(topics.bridgeHealth)),
            JSONMember("value_template", .string(state)),
            JSONMember("json_attributes_topic", .string(topics.bridgeHealth)),
            JSONMember("json_attributes_template", .string(attributes)),
            JSONMember("device_class", "problem"),
            JSONMember("entity_category", "diagnostic"),
            JSONMember("availability", availability),
            JSONMember("origin", Self.origin),
            JSONMember("device", device),
        ]
        return DiscoveryMessage(
            topic: topics.discovery(component: "binary_sensor", nodeID: node, objectID: objectID),
            payload: JSONValue.object(members).bytes)
    }

    /// Empty retained payloads that make Home Assistant delete the given entities.
    package func removals(_ topics: some Sequence<String>) -> [DiscoveryMessage] {
        topics.map { DiscoveryMessage(topic: $0, payload: []) }
    }

    /// `heart_rate` → `Heart rate`.
    static func displayName(_ field: String) -> String {
        let words = field.split(separator: "_").map(String.init)
        guard let first = words.first else { return field }
        return ([first.prefix(1).uppercased() + first.dropFirst()] + words.dropFirst()).joined(separator: " ")
    }
}
