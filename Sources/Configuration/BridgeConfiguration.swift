/// The whole `config.json`: load it with ``ConfigurationLoader``. Every optional key has a
/// default; `docs/configuration.md` lists them.
public struct BridgeConfiguration: Sendable, Equatable {
    /// Names this gateway in `bridge/info` and is the default MQTT client id.
    package var gatewayID: String
    package var bluetooth: BluetoothSettings
    package var mqtt: MQTTSettings
    package var outbox: OutboxSettings
    package var homeAssistant: HomeAssistantSettings
    package var commands: CommandSettings
    public var devices: [DeviceConfiguration]
    /// Zero-configuration devices (off by default).
    package var autoDevices: AutoDeviceSettings
    /// Room presence (off unless a room is set).
    package var presence: PresenceSettings

    package init(
        gatewayID: String = "blebridge", bluetooth: BluetoothSettings = BluetoothSettings(),
        mqtt: MQTTSettings = MQTTSettings(), outbox: OutboxSettings = OutboxSettings(),
        homeAssistant: HomeAssistantSettings = HomeAssistantSettings(), commands: CommandSettings = CommandSettings(),
        devices: [DeviceConfiguration] = [], autoDevices: AutoDeviceSettings = AutoDeviceSettings(),
        presence: PresenceSettings = PresenceSettings()
    ) {
        self.gatewayID = gatewayID
        self.bluetooth = bluetooth
        self.mqtt = mqtt
        self.outbox = outbox
        self.homeAssistant = homeAssistant
        self.commands = commands
        self.devices = devices
        self.autoDevices = autoDevices
        self.presence = presence
    }

    /// The device with `id`, if configured.
    package func device(id: String) -> DeviceConfiguration? {
        devices.first { $0.id == id }
    }

    /// Things that are valid but probably not what the user wants (shown by `check-config` and
    /// logged at start-up).
    package var warnings: [String] {
        var warnings: [String] = []
        if bluetooth.maxConnections > 7 {
            warnings.append(
                "bluetooth.max_connections is \(bluetooth.maxConnections); most controllers stall beyond about 7 connections"
            )
        }
        let connected = devices.filter { $0.connection == .keepConnected }.count
        if connected > bluetooth.maxConnections {
            warnings.append(
                "\(connected) devices use keep_connected but bluetooth.max_connections is \(bluetooth.maxConnections); the pool will rotate them"
            )
        }
        if commands.rawGATT.enabled, commands.rawGATT.allow.isEmpty {
            warnings.append(
                "commands.raw_gatt.enabled is true but the allow list is empty; every raw request will be refused")
        }
        if bluetooth.scan.mode == .passive {
            warnings.append(
                "bluetooth.scan.mode \"passive\" listens through BlueZ's advertisement monitors, which bluetoothd offers only with experimental features (bluetoothd -E, or Experimental = true in main.conf); without them blebridge run stops at start, and devices are caught only by the data they advertise, not by address (docs/configuration.md, \"Passive scanning\")"
            )
        }
        if mqtt.tls.insecure {
            warnings.append("mqtt.tls.insecure is true: the broker's host name is not checked against its certificate")
        }
        for (index, device) in devices.enumerated() where device.match.address == nil {
            warnings.append(
                "devices[\(index)] (\"\(device.id)\") matches without an address: the first device with a fixed address it catches is \"\(device.id)\", every further one is published as its own device \"\(device.id)_<last 3 address bytes>\" (docs/configuration.md, \"One match, several devices\")"
            )
        }
        if devices.isEmpty, !autoDevices.enabled {
            warnings.append("no devices are configured; the gateway will only publish its own state")
        }
        if mqtt.sharedBroker, mqtt.clientID != gatewayID {
            warnings.append(
                "mqtt.shared_broker is true and mqtt.client_id is \"\(mqtt.clientID)\", not the gateway_id: every gateway on the broker needs its own client id, or the broker disconnects one each time the other connects (leave client_id out to use gateway_id)"
            )
        }
        warnings += mqtt.credentialWarnings
        return warnings
    }

    static let keys = [
        "$schema", "gateway_id", "bluetooth", "mqtt", "outbox", "homeassistant", "commands", "devices", "auto_devices",
        "presence",
    ]
}

extension BridgeConfiguration: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys, what: "the configuration object")
        _ = try reader.string("$schema", expected: "the path or URL of the JSON Schema (ignored)")
        let givenID = try reader.string("gateway_id", expected: TopicRules.identifierRule)
        gatewayID = givenID ?? "blebridge"
        guard TopicRules.isIdentifier(gatewayID) else {
            throw reader.error(
                "gateway_id", .invalidValue, "\"\(gatewayID)\" is not accepted; expected \(TopicRules.identifierRule)")
        }
        bluetooth = try reader.object(BluetoothSettings.self, "bluetooth") ?? BluetoothSettings()
        mqtt = try reader.object(MQTTSettings.self, "mqtt") ?? MQTTSettings(clientID: gatewayID)
        if mqtt.clientID.isEmpty { mqtt.clientID = gatewayID }
        if mqtt.sharedBroker, givenID == nil {
            throw reader.error(
                "gateway_id", .missingKey,
                "mqtt.shared_broker is true: give this gateway its own gateway_id (each gateway on the broker needs a different one)"
            )
        }
        outbox = try reader.object(OutboxSettings.self, "outbox") ?? OutboxSettings()
        homeAssistant = try reader.object(HomeAssistantSettings.self, "homeassistant") ?? HomeAssistantSettings()
        commands = try reader.object(CommandSettings.self, "commands") ?? CommandSettings()
        devices = try reader.objects(DeviceConfiguration.self, "devices") ?? []
        autoDevices = try reader.object(AutoDeviceSettings.self, "auto_devices") ?? AutoDeviceSettings()
        presence = try reader.object(PresenceSettings.self, "presence") ?? PresenceSettings()
        try validateAcrossDevices()
    }

    private func validateAcrossDevices() throws {
        for (index, device) in devices.enumerated() {
            if let first = devices[..<index].firstIndex(where: { $0.id == device.id }) {
                throw ConfigurationError(
                    code: .duplicate, keyPath: "devices[\(index)].id",
                    message: "device id \"\(device.id)\" is already used by devices[\(first)]; ids must be unique")
            }
            if let address = device.match.address,
                let first = devices[..<index].firstIndex(where: { $0.match.address?.bytes == address.bytes })
            {
                throw ConfigurationError(
                    code: .duplicate, keyPath: "devices[\(index)].match.address",
                    message: "\(address) is already matched by devices[\(first)] (\"\(devices[first].id)\")")
            }
        }
        for (index, rule) in commands.rawGATT.allow.enumerated() {
            guard let device = device(id: rule.device) else {
                let ids = devices.map(\.id).joined(separator: ", ")
                throw ConfigurationError(
                    code: .invalidValue, keyPath: "commands.raw_gatt.allow[\(index)].device",
                    message:
                        "no device has id \"\(rule.device)\"; expected one of: \(ids.isEmpty ? "(no devices configured)" : ids)"
                )
            }
            if device.connection == .passive {
                throw ConfigurationError(
                    code: .conflict, keyPath: "commands.raw_gatt.allow[\(index)].device",
                    message:
                        "device \"\(device.id)\" is passive (never connected), so raw GATT requests cannot reach it")
            }
        }
    }
}
