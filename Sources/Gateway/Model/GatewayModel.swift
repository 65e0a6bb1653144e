import Bluetooth
public import Configuration
import Foundation
import Timekeeping

/// What the gateway derives from the configuration: the command policy, the pool's device
/// specs, the Home Assistant devices. Pure; rebuilt on every reload.
public struct GatewayModel: Sendable {
    public let configuration: BridgeConfiguration
    public let topics: TopicContract

    public init(configuration: BridgeConfiguration) {
        self.configuration = configuration
        self.topics = TopicContract(
            base: configuration.mqtt.baseTopic, discoveryPrefix: configuration.homeAssistant.prefix,
            homeAssistantStatus: configuration.homeAssistant.statusTopic,
            sharedGatewayID: configuration.mqtt.sharedBroker ? configuration.gatewayID : nil)
    }

    /// Commands per second of a rate limit.
    static func perSecond(_ limit: RateLimit) -> Double {
        let seconds = limit.period.inSeconds
        return seconds > 0 ? Double(limit.count) / seconds : Double(limit.count)
    }

    public var commandPolicy: CommandPolicy {
        let raw = configuration.commands.rawGATT
        let devices = configuration.devices.map { device in
            var readTargets: [String: CharacteristicTarget] = [:]
            for subscription in device.subscribe {
                let uuid = subscription.characteristic
                let target = CharacteristicTarget(uuid, service: subscription.service)
                readTargets[uuid.shortString] = target
                if let name = AssignedNumbers.characteristicName(for: uuid) { readTargets[name] = target }
                if uuid == BluetoothUUID(UInt16(0x2A19)) { readTargets["battery"] = target }
            }
            var rawAllow: [CharacteristicTarget: Set<GATTOperation>] = [:]
            for rule in raw.allow where rule.device == device.id {
                rawAllow[CharacteristicTarget(rule.characteristic, service: rule.service), default: []]
                    .formUnion(rule.operations)
            }
            return DeviceCommandPolicy(
                deviceID: device.id, commands: device.commands.map(Self.namedCommand), readTargets: readTargets,
                rawAllow: rawAllow, rate: device.rateLimit.map(Self.perSecond))
        }
        return CommandPolicy(
            devices: devices, rawGATTEnabled: raw.enabled, defaultRate: Self.perSecond(configuration.commands.rateLimit)
        )
    }

    static func namedCommand(_ command: DeviceCommand) -> NamedCommand {
        let kind = ValueFormat.Kind(rawValue: command.format.rawValue) ?? .hex
        let format = ValueFormat(
            kind, minimum: command.minimum.map(Int64.init), maximum: command.maximum.map(Int64.init),
            maximumLength: command.maximumLength, minimumLength: command.minimumLength, layout: command.layout)
        return NamedCommand(
            name: command.name, characteristic: command.characteristic, service: command.service,
            operations: Set(command.operations),
            format: format, writeType: command.writeType == .withoutResponse ? .withoutResponse : .withResponse)
    }

    package var schedulerSpecs: [ConnectionScheduler.DeviceSpec] {
        configuration.devices.map(Self.spec)
    }

    static func spec(_ device: DeviceConfiguration) -> ConnectionScheduler.DeviceSpec {
        let mode: ConnectionScheduler.Mode =
            switch device.connection {
            case .keepConnected: .keepConnected
            case .connectOnDemand: .onDemand
            case .passive: .passive
            }
        let poll = device.subscribe.filter { $0.mode == .read }.compactMap(\.interval).min()
        let silence = device.subscribe.filter { $0.mode != .read }.compactMap(\.silenceTimeout).min()
        return ConnectionScheduler.DeviceSpec(id: device.id, mode: mode, pollInterval: poll, silenceTimeout: silence)
    }

    /// The Home Assistant devices, with the maker and model an advertisement format implies
    /// (a Ruuvi format comes from a RuuviTag); the Device Information service, read at
    /// connection, adds them for connected devices.
    package var discoveryDevices: [DiscoveryDevice] {
        configuration.devices.map { device in
            let known = Self.advertisedMakers[device.advertisement?.decoder ?? ""]
            return DiscoveryDevice(
                id: device.id, name: device.name, address: device.match.address?.string, model: known?.model ?? nil,
                manufacturer: known?.manufacturer)
        }
    }

    /// Advertisement decoders whose format only one maker's devices send, and the model when the
    /// format is one model's (a MiBeacon device's model is in its readings, `model`).
    static let advertisedMakers: [String: (manufacturer: String, model: String?)] = [
        "ruuvi": ("Ruuvi Innovations", "RuuviTag"), "mibeacon": ("Xiaomi", nil),
        "govee": ("Govee", nil), "thermopro": ("ThermoPro", nil), "inkbird": ("INKBIRD", nil),
    ].merging(consumerSensorMakers) { built, _ in built }

    package var discoveryBuilder: DiscoveryBuilder? {
        configuration.homeAssistant.enabled
            ? DiscoveryBuilder(
                topics: topics, gatewayID: configuration.gatewayID,
                jsonAvailability: configuration.mqtt.jsonAvailability) : nil
    }

    /// `<device>/availability`: `online`/`offline`, or `{"state":"online"}` with `mqtt.json_availability`.
    package func availabilityPayload(online: Bool) -> [UInt8] {
        guard configuration.mqtt.jsonAvailability else { return Array((online ? "online" : "offline").utf8) }
        return (online ? BridgePayloads.online : BridgePayloads.offline).bytes
    }

    /// Discovery for the writable commands of every device (switches, numbers, selects) and, with
    /// room presence on, its room sensor; a
    /// control shows the device's state when its characteristic is subscribed
    /// (``stateCommand(characteristic:service:of:)``).
    package var controlDiscovery: [String: [DiscoveryMessage]] {
        guard let builder = discoveryBuilder else { return [:] }
        var result: [String: [DiscoveryMessage]] = [:]
        for device in configuration.devices {
            let discoveryDevice = DiscoveryDevice(
                id: device.id, name: device.name, address: device.match.address?.string)
            let stateful = Set(
                device.subscribe.compactMap { subscription in
                    subscription.decoder == nil && subscription.layout == nil
                        ? Self.stateCommand(
                            characteristic: subscription.characteristic, service: subscription.service, of: device)?
                            .name
                        : nil
                })
            result[device.id] = device.commands.compactMap {
                builder.control(
                    device: discoveryDevice, command: Self.namedCommand($0), stateful: stateful.contains($0.name))
            }
            // Room presence: the room sensor is announced with the controls.
            if configuration.presence.enabled {
                result[device.id, default: []].append(builder.room(device: discoveryDevice))
            }
        }
        return result
    }

    /// The named command on `characteristic` (in `service`, when both name one), whose format
    /// decodes that characteristic's subscribed values into the command's name, so the state
    /// carries `power` and `brightness` as Home Assistant's controls read them.
    package static func stateCommand(
        characteristic: BluetoothUUID, service: BluetoothUUID?, of device: DeviceConfiguration
    ) -> NamedCommand? {
        device.commands.first { command in
            command.characteristic == characteristic
                && (command.service == nil || service == nil || command.service == service)
        }.map(namedCommand)
    }

    package func bridgeInfo(startedAt: Date) -> BridgeInfo {
        BridgeInfo(
            gatewayID: configuration.gatewayID, adapter: configuration.bluetooth.adapter, baseTopic: topics.base,
            maxConnections: configuration.bluetooth.maxConnections, devices: configuration.devices.map(\.id),
            homeAssistant: configuration.homeAssistant.enabled, rawGATT: configuration.commands.rawGATT.enabled,
            startedAt: startedAt)
    }

    /// Device ids whose configuration differs between `old` and `new` (changed or removed), and
    /// those added: a reload reconnects only these.
    package static func changes(from old: BridgeConfiguration, to new: BridgeConfiguration) -> (
        changed: Set<String>, removed: Set<String>, added: Set<String>
    ) {
        let oldDevices = Dictionary(old.devices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let newDevices = Dictionary(new.devices.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let removed = Set(oldDevices.keys).subtracting(newDevices.keys)
        let added = Set(newDevices.keys).subtracting(oldDevices.keys)
        let changed = Set(oldDevices.keys).intersection(newDevices.keys).filter { oldDevices[$0] != newDevices[$0] }
        return (changed, removed, added)
    }
}
