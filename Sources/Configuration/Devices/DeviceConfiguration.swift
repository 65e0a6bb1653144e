import Bluetooth

/// `devices[]`: one BLE device the gateway follows.
public struct DeviceConfiguration: Sendable, Equatable {
    package enum Connection: String, ConfigurationEnum {
        /// Stay connected; reconnect whenever the link drops.
        case keepConnected = "keep_connected"
        /// Connect for periodic reads and commands, then disconnect.
        case connectOnDemand = "connect_on_demand"
        /// Never connect; only decode advertisements.
        case passive
    }

    /// Topic-safe identifier: `<base>/<id>`.
    public var id: String
    /// Friendly name (Home Assistant device name); defaults to `id`.
    package var name: String
    package var match: DeviceMatch
    package var connection: Connection
    package var subscribe: [Subscription]
    package var advertisement: AdvertisementSettings?
    package var commands: [DeviceCommand]
    /// Command rate limit for this device; nil: `commands.rate_limit`.
    package var rateLimit: RateLimit?
    /// Publish a reading only when a field's value differs from the last published one (`rssi`,
    /// `packet_id` and `encryption_counter` alone do not count as a change).
    package var onlyOnChange: Bool
    /// Publish at most one reading per this interval (per characteristic, and once for
    /// advertisements); nil: every reading.
    package var minInterval: Duration?
    /// Drop BTHome advertisements that repeat the previous `packet_id` or replay an older
    /// encryption counter (the BTHome specification asks receivers to); default on.
    package var deduplicate: Bool
    /// The 6-digit passkey the device shows or has printed on it (passkey-entry pairing). bluetoothd
    /// pairs by itself when the device refuses a read, write or subscription for want of security; the
    /// gateway's pairing agent answers its `RequestPasskey` with this. Nil: passkey pairing is declined.
    package var passkey: UInt32?
    /// Room presence: the device's signal at 1 m (dBm), for a device whose advertisements say
    /// none (an iBeacon's measured power and an Eddystone's TX power win). Nil: `presence.reference_power`.
    package var txPower: Int?

    package init(
        id: String, name: String? = nil, match: DeviceMatch, connection: Connection = .keepConnected,
        subscribe: [Subscription] = [], advertisement: AdvertisementSettings? = nil, commands: [DeviceCommand] = [],
        rateLimit: RateLimit? = nil, onlyOnChange: Bool = false, minInterval: Duration? = nil, deduplicate: Bool = true,
        passkey: UInt32? = nil, txPower: Int? = nil
    ) {
        self.id = id
        self.name = name ?? id
        self.match = match
        self.connection = connection
        self.subscribe = subscribe
        self.advertisement = advertisement
        self.commands = commands
        self.rateLimit = rateLimit
        self.onlyOnChange = onlyOnChange
        self.minInterval = minInterval
        self.deduplicate = deduplicate
        self.passkey = passkey
        self.txPower = txPower
    }

    /// The command called `name`, if configured.
    package func command(named name: String) -> DeviceCommand? {
        commands.first { $0.name == name }
    }

    static let keys = [
        "id", "name", "match", "connection", "subscribe", "advertisement", "commands", "rate_limit", "only_on_change",
        "min_interval", "deduplicate", "passkey",
        "tx_power",
    ]

    /// Topic levels under `<base>/` the gateway itself uses.
    static let reservedIDs: Set<String> = ["bridge"]

    /// Why `id` cannot be a device id, or nil when it can.
    package static func idProblem(_ id: String) -> String? {
        guard TopicRules.isIdentifier(id) else {
            return "\"\(id)\" is not accepted; expected \(TopicRules.identifierRule)"
        }
        guard !reservedIDs.contains(id) else {
            return "\"\(id)\" is reserved for the gateway's own topics; choose another id"
        }
        return nil
    }
}

extension DeviceConfiguration: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        id = try reader.required(try reader.string("id"), "id", accepted: TopicRules.identifierRule)
        if let problem = Self.idProblem(id) { throw reader.error("id", .invalidValue, problem) }
        name = try reader.nonEmptyString("name", expected: "a friendly name") ?? id
        match = try reader.required(
            try reader.object(DeviceMatch.self, "match"), "match",
            accepted: "an object with address, name_prefix and/or service")
        subscribe = try reader.objects(Subscription.self, "subscribe") ?? []
        advertisement = try reader.object(AdvertisementSettings.self, "advertisement")
        commands = try reader.objects(DeviceCommand.self, "commands") ?? []
        rateLimit = try reader.rateLimit("rate_limit")
        onlyOnChange = try reader.bool("only_on_change") ?? false
        minInterval = try reader.duration("min_interval", minimum: .milliseconds(1))
        deduplicate = try reader.bool("deduplicate") ?? true
        passkey = try reader.integer("passkey", in: 0...999_999).map { UInt32($0) }
        txPower = try reader.integer("tx_power", in: -127...20)
        // Without an explicit mode, a device with nothing to connect for is only listened to.
        connection =
            try reader.enumeration(Connection.self, "connection")
            ?? (subscribe.isEmpty && commands.isEmpty ? .passive : .keepConnected)

        try validate(reader)
    }

    private func validate(_ reader: ObjectReader) throws {
        if connection == .passive {
            if !subscribe.isEmpty {
                throw reader.error(
                    "subscribe", .conflict,
                    "a passive device is never connected; use \"connection\": \"keep_connected\" to subscribe")
            }
            if !commands.isEmpty {
                throw reader.error(
                    "commands", .conflict,
                    "a passive device is never connected; use \"connection\": \"keep_connected\" or \"connect_on_demand\" for commands"
                )
            }
        }
        for (index, subscription) in subscribe.enumerated() {
            let path = reader.keyPath("subscribe") + "[\(index)]"
            if connection == .connectOnDemand, subscription.mode != .read {
                throw ConfigurationError(
                    code: .conflict, keyPath: path + ".mode",
                    message:
                        "mode \"\(subscription.mode.rawValue)\" needs a lasting connection; use \"connection\": \"keep_connected\" or mode \"read\""
                )
            }
            if let first = subscribe[..<index].firstIndex(where: {
                $0.characteristic == subscription.characteristic && $0.service == subscription.service
            }) {
                throw ConfigurationError(
                    code: .duplicate, keyPath: path + ".characteristic",
                    message: "\(subscription.characteristic) is already subscribed in subscribe[\(first)]")
            }
        }
        for (index, command) in commands.enumerated() {
            if let first = commands[..<index].firstIndex(where: { $0.name == command.name }) {
                throw ConfigurationError(
                    code: .duplicate, keyPath: reader.keyPath("commands") + "[\(index)].name",
                    message:
                        "command \"\(command.name)\" is already defined in commands[\(first)]; names must be unique per device"
                )
            }
        }
    }
}
