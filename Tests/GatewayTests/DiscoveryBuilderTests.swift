import Bluetooth
import Configuration
import Decoders
import Gateway
import JSON
import Testing

@Suite struct DiscoveryBuilderTests {
    let builder = DiscoveryBuilder(topics: TopicContract(), gatewayID: "blebridge")
    let strap = DiscoveryDevice(id: "hr_strap", name: "Chest strap", address: "C0:FF:EE:00:00:01")

    func json(_ message: DiscoveryMessage?) throws -> JSONValue {
        let message = try #require(message)
        return try JSONParser().parse(message.payload)
    }

    @Test func heartRateSensorIsCompleteWithAvailabilityOnBridgeAndDevice() throws {
        let message = try #require(builder.sensor(device: strap, field: "heart_rate", sample: .int(72), unit: "bpm"))
        #expect(message.topic == "homeassistant/sensor/blebridge_hr_strap/heart_rate/config")
        let config = try json(message)
        #expect(config["unique_id"] == "blebridge_hr_strap_heart_rate")
        #expect(config["state_topic"] == "blebridge/hr_strap")
        #expect(config["value_template"] == "{{ value_json.heart_rate }}")
        #expect(config["unit_of_measurement"] == "bpm")
        #expect(config["state_class"] == "measurement")
        #expect(config["availability_mode"] == "all")
        #expect(
            config["availability"]
                == .array([
                    .object([
                        JSONMember("topic", "blebridge/bridge/state"),
                        JSONMember("value_template", "{{ value_json.state }}"),
                    ]),
                    .object([JSONMember("topic", "blebridge/hr_strap/availability")]),
                ]))
        let device = try #require(config["device"])
        #expect(device["identifiers"] == .array(["blebridge_hr_strap"]))
        // Home Assistant's Bluetooth integrations write the address this way: the devices merge.
        #expect(device["connections"] == .array([.array(["bluetooth", "C0:FF:EE:00:00:01"])]))
        #expect(device["via_device"] == "blebridge_bridge")
        // Nothing reported a maker: none is claimed (not "BLEBridge" for someone else's strap).
        #expect(device["manufacturer"] == nil && device["model"] == nil && device["sw_version"] == nil)
        #expect(config["object_id"] == nil)
        #expect(config["default_entity_id"] == "sensor.hr_strap_heart_rate")
        #expect(config["origin"]?["name"] == "BLEBridge")
        #expect(config["origin"]?["sw_version"] == .string(BLEBridgeVersion.string))
        #expect(config["enabled_by_default"] == nil)
    }

    @Test func reportedMakerModelAndFirmwareFillTheDeviceBlock() throws {
        let described = DiscoveryDevice(
            id: "hr_strap", name: "Chest strap", model: "H10", manufacturer: "Polar Electro Oy", firmware: "3.1.1")
        let device = try #require(
            try json(builder.sensor(device: described, field: "heart_rate", sample: 72, unit: "bpm"))["device"])
        #expect(device["manufacturer"] == "Polar Electro Oy")
        #expect(device["model"] == "H10")
        #expect(device["sw_version"] == "3.1.1")
    }

    @Test func rssiIsADisabledDiagnosticEntity() throws {
        let rssi = try json(builder.sensor(device: strap, field: "rssi", sample: -60, unit: "dBm"))
        #expect(rssi["enabled_by_default"] == false)
        #expect(rssi["entity_category"] == "diagnostic")
        let battery = try json(builder.sensor(device: strap, field: "battery", sample: 80, unit: "%", kind: .battery))
        #expect(battery["enabled_by_default"] == nil)
    }

    @Test(arguments: [
        ("temperature", "°C", "temperature", "°C"),
        ("temperature", "celsius", "temperature", "°C"),
        ("humidity", "%", "humidity", "%"),
        ("battery", "%", "battery", "%"),
        ("pressure", "hPa", "atmospheric_pressure", "hPa"),
        ("rssi", "dBm", "signal_strength", "dBm"),
        ("voltage", "V", "voltage", "V"),
    ])
    func deviceClassesAndUnits(field: String, unit: String, deviceClass: String, haUnit: String) throws {
        let config = try json(builder.sensor(device: strap, field: field, sample: .double(21.5), unit: unit))
        #expect(config["device_class"] == .string(deviceClass))
        #expect(config["unit_of_measurement"] == .string(haUnit))
    }

    @Test func arraysAreNotEntitiesAndBooleansAreBinarySensors() throws {
        #expect(builder.sensor(device: strap, field: "rr_intervals", sample: .array([0.8]), unit: "s") == nil)
        let contact = try #require(
            builder.sensor(device: strap, field: "sensor_contact", sample: .bool(true), unit: nil))
        #expect(contact.topic.hasPrefix("homeassistant/binary_sensor/"))
        #expect(try json(contact)["state_class"] == nil)
    }

    @Test func writableCommandsBecomeControls() throws {
        let lamp = DiscoveryDevice(id: "lamp", name: "Lamp")
        let power = NamedCommand(
            name: "power", characteristic: BluetoothUUID(UInt16(0x2A06)), operations: [.read, .write],
            format: ValueFormat(.bool))
        let powerMessage = try #require(builder.control(device: lamp, command: power, stateful: true))
        #expect(powerMessage.topic == "homeassistant/switch/blebridge_lamp/power/config")
        let config = try json(powerMessage)
        #expect(config["command_topic"] == "blebridge/lamp/set")
        #expect(config["payload_on"] == #"{"power":true}"#)
        #expect(config["state_topic"] == "blebridge/lamp")
        #expect(config["value_template"] == "{{ 'ON' if value_json.power else 'OFF' }}")
        #expect(config["default_entity_id"] == "switch.lamp_power")
        #expect(config["origin"] != nil && config["object_id"] == nil)
        let brightness = NamedCommand(
            name: "brightness", characteristic: BluetoothUUID(UInt16(0x2A06)), operations: [.write],
            format: ValueFormat(.uint8, minimum: 0, maximum: 100))
        let number = try json(builder.control(device: lamp, command: brightness, stateful: true))
        #expect(number["max"] == .int(100))
        #expect(number["value_template"] == "{{ value_json.brightness }}")
        #expect(
            builder.control(
                device: lamp,
                command: NamedCommand(
                    name: "r", characteristic: BluetoothUUID(UInt16(1)), operations: [.read], format: ValueFormat(.bool)
                ), stateful: true) == nil)
    }

    @Test func controlsWhoseValueNothingReportsHaveNoStateTopic() throws {
        let lamp = DiscoveryDevice(id: "lamp", name: "Lamp")
        let power = NamedCommand(
            name: "power", characteristic: BluetoothUUID(UInt16(0x2A06)), operations: [.write],
            format: ValueFormat(.bool))
        // No state topic: Home Assistant keeps the switch optimistic instead of reading an
        // undefined `value_json.power` from every state message.
        let config = try json(builder.control(device: lamp, command: power, stateful: false))
        #expect(config["state_topic"] == nil && config["value_template"] == nil)
    }

    @Test func decoderKindsDecideComponentClassAndStateClass() throws {
        let energy = try json(
            builder.sensor(device: strap, field: "energy_expended", sample: .int(5), unit: "kJ", kind: .counter))
        #expect(energy["state_class"] == "total_increasing")
        #expect(energy["device_class"] == nil)
        let contact = try #require(
            builder.sensor(
                device: strap, field: "sensor_contact", sample: .bool(true), unit: nil, kind: .binary(nil)))
        #expect(contact.topic == "homeassistant/binary_sensor/blebridge_hr_strap/sensor_contact/config")
        #expect(try json(contact)["device_class"] == nil)
        // A class Home Assistant does not know is left out rather than refused.
        let unknown = try json(
            builder.sensor(device: strap, field: "x", sample: .bool(true), unit: nil, kind: .binary("temp")))
        #expect(unknown["device_class"] == nil)
        // A state class the device class does not allow becomes the one it does.
        let volume = try json(
            builder.sensor(device: strap, field: "volume", sample: 1.5, unit: "L", kind: .sensor("volume")))
        #expect(volume["state_class"] == "total_increasing")
        #expect(builder.sensor(device: strap, field: "model", sample: "H10", unit: nil, kind: .attribute) == nil)
        let battery = try json(
            builder.sensor(device: strap, field: "battery", sample: .int(80), unit: "%", kind: .battery))
        #expect(battery["entity_category"] == "diagnostic")
        #expect(battery["device_class"] == "battery")
    }

    @Test func removalsAreEmptyPayloads() {
        let removals = builder.removals(["homeassistant/sensor/a/b/config"])
        #expect(removals == [DiscoveryMessage(topic: "homeassistant/sensor/a/b/config", payload: [])])
    }

    @Test func bridgeEntitiesIncludeAnOutboxProblemSensor() throws {
        let entities = builder.bridgeEntities()
        #expect(entities.count == 5)
        let outbox = try #require(entities.first { $0.topic.contains("/outbox_error/") })
        #expect(outbox.topic == "homeassistant/binary_sensor/blebridge_bridge/outbox_error/config")
        let config = try json(outbox)
        #expect(config["device_class"] == "problem")
        #expect(config["entity_category"] == "diagnostic")
        #expect(config["state_topic"] == "blebridge/bridge/health")
        #expect(config["value_template"] == "{{ 'ON' if value_json.outbox_error else 'OFF' }}")
        let dropped = try json(entities.first { $0.topic.contains("/dropped/") })
        #expect(dropped["state_class"] == "total_increasing")
        #expect(dropped["enabled_by_default"] == false)
    }

    @Test func bridgeEntitiesIncludeABluetoothProblemSensor() throws {
        let bluetooth = try #require(builder.bridgeEntities().first { $0.topic.contains("/bluetooth/") })
        #expect(bluetooth.topic == "homeassistant/binary_sensor/blebridge_bridge/bluetooth/config")
        let config = try json(bluetooth)
        #expect(config["name"] == "Bluetooth")
        #expect(config["device_class"] == "problem")
        #expect(config["entity_category"] == "diagnostic")
        #expect(config["state_topic"] == "blebridge/bridge/health")
        #expect(config["value_template"] == "{{ 'OFF' if value_json.bluetooth.available else 'ON' }}")
        #expect(config["json_attributes_template"] == "{{ value_json.bluetooth | tojson }}")
    }

    /// The topic of the first availability entry (the bridge's).
    func bridgeAvailability(_ config: JSONValue) -> JSONValue? {
        guard case .array(let list)? = config["availability"] else { return nil }
        return list.first?["topic"]
    }

    /// Single-gateway mode: every id starts with the gateway id, exactly as before shared-broker mode.
    @Test func withoutTheSharedBrokerTheIdsNameTheGateway() throws {
        let builder = DiscoveryBuilder(topics: TopicContract(base: "home/ble"), gatewayID: "gw-a")
        let message = try #require(builder.sensor(device: strap, field: "heart_rate", sample: .int(72), unit: "bpm"))
        #expect(message.topic == "homeassistant/sensor/gw-a_hr_strap/heart_rate/config")
        #expect(message.device == "hr_strap")
        let config = try json(message)
        #expect(config["unique_id"] == "gw-a_hr_strap_heart_rate")
        #expect(config["device"]?["identifiers"] == .array(["gw-a_hr_strap"]))
        #expect(config["device"]?["via_device"] == "gw-a_bridge")
        #expect(bridgeAvailability(config) == "home/ble/bridge/state")
        let room = builder.room(device: strap)
        #expect(room.topic == "homeassistant/sensor/gw-a_hr_strap/room/config")
        #expect(try json(room)["unique_id"] == "gw-a_hr_strap_room")
    }

    /// Shared-broker mode: every gateway announces one device under ids built from the base topic
    /// (the same topic, unique id and identifier whoever publishes); only `via_device` and the
    /// bridge availability name the publishing gateway. The bridge's entities stay per gateway.
    @Test func inSharedBrokerModeTheIdsAreTheBaseTopicsAndViaDeviceIsThePublisher() throws {
        func builder(_ gateway: String) -> DiscoveryBuilder {
            DiscoveryBuilder(topics: TopicContract(base: "home/ble", sharedGatewayID: gateway), gatewayID: gateway)
        }
        let power = NamedCommand(
            name: "power", characteristic: BluetoothUUID(UInt16(0x2A06)), operations: [.read, .write],
            format: ValueFormat(.bool))
        var configs: [String: [String: JSONValue]] = [:]
        for gateway in ["gw-a", "gw-b"] {
            let messages = [
                try #require(
                    builder(gateway).sensor(device: strap, field: "heart_rate", sample: .int(72), unit: "bpm")),
                try #require(builder(gateway).control(device: strap, command: power, stateful: true)),
                builder(gateway).room(device: strap),
            ]
            #expect(
                messages.map(\.topic) == [
                    "homeassistant/sensor/home_ble_hr_strap/heart_rate/config",
                    "homeassistant/switch/home_ble_hr_strap/power/config",
                    "homeassistant/sensor/home_ble_hr_strap/room/config",
                ])
            #expect(messages.allSatisfy { $0.device == "hr_strap" })
            for message in messages {
                let config = try json(message)
                #expect(config["device"]?["identifiers"] == .array(["home_ble_hr_strap"]))
                #expect(config["device"]?["via_device"] == .string("\(gateway)_bridge"))
                #expect(bridgeAvailability(config) == .string("home/ble/bridge/gateways/\(gateway)"))
                configs[gateway, default: [:]][message.topic] = config["unique_id"]
            }
            let bridge = builder(gateway).bridgeEntities()
            #expect(bridge.allSatisfy { $0.topic.contains("/\(gateway)_bridge/") && $0.device == nil })
        }
        #expect(
            configs["gw-a"]?.values.sorted { "\($0)" < "\($1)" }
                == ["home_ble_hr_strap_heart_rate", "home_ble_hr_strap_power", "home_ble_hr_strap_room"])
        #expect(configs["gw-a"] == configs["gw-b"])
        #expect(
            DiscoveryBuilder.nodeID(ofTopic: "homeassistant/sensor/home_ble_hr_strap/room/config")
                == "home_ble_hr_strap")
        #expect(DiscoveryBuilder.nodeID(ofTopic: "home_ble/hr_strap/room") == nil)
    }

    /// Turning `mqtt.shared_broker` on deletes what this gateway announced under its single-gateway
    /// ids, never a topic of the shared scheme; without the mode nothing is deleted (as before).
    @Test func theSingleGatewayTopicsAreDeletedOnlyInSharedBrokerMode() {
        let announced = [
            "lamp": [
                "homeassistant/switch/gw-a_lamp/power/config", "homeassistant/switch/blebridge_lamp/power/config",
                "homeassistant/sensor/gw-a_lampe/x/config",
            ],
            "gone": ["homeassistant/sensor/gw-a_gone/x/config"],
        ]
        let shared = DiscoveryBuilder(topics: TopicContract(sharedGatewayID: "gw-a"), gatewayID: "gw-a")
        #expect(
            shared.singleGatewayTopics(announced, devices: ["lamp"])
                == ["lamp": ["homeassistant/switch/gw-a_lamp/power/config"]])
        let single = DiscoveryBuilder(topics: TopicContract(), gatewayID: "gw-a")
        #expect(single.singleGatewayTopics(announced, devices: ["lamp"]).isEmpty)
        // A gateway named like the base topic: both schemes are one, nothing is deleted.
        let same = DiscoveryBuilder(topics: TopicContract(sharedGatewayID: "blebridge"), gatewayID: "blebridge")
        #expect(same.singleGatewayTopics(announced, devices: ["lamp"]).isEmpty)
    }
}
