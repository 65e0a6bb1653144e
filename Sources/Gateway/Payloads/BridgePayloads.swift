import Foundation
import JSON
import Timekeeping

/// Payloads of the `<base>/bridge/…` topics.
package enum BridgePayloads {
    /// `bridge/state` while running (retained).
    package static let online: JSONValue = .object([JSONMember("state", "online")])
    /// `bridge/state` as last will and on clean shutdown (retained).
    package static let offline: JSONValue = .object([JSONMember("state", "offline")])
}

/// `bridge/info` (retained): what this gateway is and how it is configured.
package struct BridgeInfo: Sendable, Hashable {
    package var gatewayID: String
    package var adapter: String
    package var baseTopic: String
    package var maxConnections: Int
    package var devices: [String]
    package var homeAssistant: Bool
    package var rawGATT: Bool
    package var startedAt: Date

    package init(
        gatewayID: String, adapter: String, baseTopic: String, maxConnections: Int, devices: [String],
        homeAssistant: Bool, rawGATT: Bool, startedAt: Date
    ) {
        self.gatewayID = gatewayID
        self.adapter = adapter
        self.baseTopic = baseTopic
        self.maxConnections = maxConnections
        self.devices = devices
        self.homeAssistant = homeAssistant
        self.rawGATT = rawGATT
        self.startedAt = startedAt
    }

    package var json: JSONValue {
        .object([
            JSONMember("version", .string(BLEBridgeVersion.string)),
            JSONMember("gateway_id", .string(gatewayID)),
            JSONMember("adapter", .string(adapter)),
            JSONMember("started", .string(Timestamp.iso8601(startedAt))),
            JSONMember(
                "config",
                .object([
                    JSONMember("base_topic", .string(baseTopic)),
                    JSONMember("max_connections", .int(Int64(maxConnections))),
                    JSONMember("devices", .array(devices.map { .string($0) })),
                    JSONMember("homeassistant", .bool(homeAssistant)),
                    JSONMember("raw_gatt", .bool(rawGATT)),
                ])),
        ])
    }
}

/// One entry of `bridge/devices` (retained: without `rssi` and `last_seen`) and of the answer to
/// `bridge/request/devices` (with them).
package struct DeviceSummary: Sendable, Hashable {
    /// How the device came to be followed: `configured` (config.json, including the devices a
    /// match without address split off), `automatic` (`auto_devices`) or `adopted`.
    package enum Origin: String, Sendable, Hashable {
        case configured, automatic, adopted
    }

    package var id: String
    package var name: String
    package var origin: Origin
    package var address: String?
    package var connection: String
    package var connected: Bool
    package var rssi: Int?
    package var lastSeen: Date?
    package var services: [String]

    package init(
        id: String, name: String, origin: Origin = .configured, address: String?, connection: String,
        connected: Bool, rssi: Int?, lastSeen: Date?, services: [String]
    ) {
        self.id = id
        self.name = name
        self.origin = origin
        self.address = address
        self.connection = connection
        self.connected = connected
        self.rssi = rssi
        self.lastSeen = lastSeen
        self.services = services
    }

    package var json: JSONValue { json(stable: false) }

    /// `stable`: only the fields that do not change with every advertisement (no `rssi`, `last_seen`).
    package func json(stable: Bool) -> JSONValue {
        var members: [JSONMember] = [
            JSONMember("id", .string(id)),
            JSONMember("name", .string(name)),
            JSONMember("origin", .string(origin.rawValue)),
            JSONMember("address", address.map { .string($0) } ?? .null),
            JSONMember("connection", .string(connection)),
            JSONMember("connected", .bool(connected)),
        ]
        if !stable {
            members.append(JSONMember("rssi", rssi.map { .int(Int64($0)) } ?? .null))
            members.append(JSONMember("last_seen", lastSeen.map { .string(Timestamp.iso8601($0)) } ?? .null))
        }
        members.append(JSONMember("services", .array(services.map { .string($0) })))
        return .object(members)
    }

    package static func list(_ devices: [DeviceSummary], stable: Bool = false) -> JSONValue {
        .array(devices.map { $0.json(stable: stable) })
    }
}

/// `bridge/health` (periodic, not retained).
package struct HealthSnapshot: Sendable, Hashable {
    package var uptime: Duration
    package var connections: Int
    package var maxConnections: Int
    package var outboxDepth: Int
    package var oldestUnsentAge: Duration?
    package var dropped: Int
    package var reconnects: Int
    package var published: Int
    package var commands: Int
    package var commandsRefused: Int
    package var time: Date
    /// Why the outbox refuses writes right now (`locked`, `disk_full`, `read_only`, …), nil while
    /// it accepts them. Readings offered meanwhile are held in memory (`outboxDepth` counts them).
    package var outboxError: String?
    /// The Bluetooth side: adapter present and powered, bluetoothd's bus name, the problem, the
    /// last error (nil leaves the member out).
    package var bluetooth: BluetoothHealth?
    /// With `auto_devices` on: the automatic devices followed, and since start those dropped to
    /// make room and the refusals at `max_devices` (one per advertisement of a refused device, not
    /// per device) (nil leaves the member out).
    package var autoDevices: AutoDeviceCounts?

    package struct AutoDeviceCounts: Sendable, Hashable {
        package var devices: Int
        package var evictions: Int
        package var refusals: Int

        package init(devices: Int, evictions: Int, refusals: Int) {
            self.devices = devices
            self.evictions = evictions
            self.refusals = refusals
        }
    }

    /// When some configured match has no address: the devices such matches split off
    /// (``MatchInstances``), and since start those dropped to make room and those refused at the
    /// bound (nil leaves the member out).
    package var matchInstances: AutoDeviceCounts?
    /// Shared-broker mode: the other gateways (``GatewayPeers/json``); nil leaves the member out.
    package var gateways: JSONValue?

    package init(
        uptime: Duration, connections: Int, maxConnections: Int, outboxDepth: Int, oldestUnsentAge: Duration?,
        dropped: Int, reconnects: Int, published: Int, commands: Int, commandsRefused: Int, time: Date,
        outboxError: String? = nil, bluetooth: BluetoothHealth? = nil, autoDevices: AutoDeviceCounts? = nil,
        matchInstances: AutoDeviceCounts? = nil, gateways: JSONValue? = nil
    ) {
        self.gateways = gateways
        self.bluetooth = bluetooth
        self.autoDevices = autoDevices
        self.matchInstances = matchInstances
        self.uptime = uptime
        self.connections = connections
        self.maxConnections = maxConnections
        self.outboxDepth = outboxDepth
        self.oldestUnsentAge = oldestUnsentAge
        self.dropped = dropped
        self.reconnects = reconnects
        self.published = published
        self.commands = commands
        self.commandsRefused = commandsRefused
        self.time = time
        self.outboxError = outboxError
    }

    /// An outbox error code as the health topic spells it: `diskFull` → `disk_full`.
    package static func outboxErrorName(_ code: String) -> String {
        var name = ""
        for character in code {
            if character.isUppercase {
                name += "_" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }

    package var json: JSONValue {
        var members = [
            JSONMember("uptime_s", .int(Int64(uptime.inSeconds))),
            JSONMember("connections", .int(Int64(connections))),
            JSONMember("max_connections", .int(Int64(maxConnections))),
            JSONMember("outbox_depth", .int(Int64(outboxDepth))),
            JSONMember(
                "oldest_unsent_age_s",
                oldestUnsentAge.map { .double(($0.inSeconds * 1000).rounded() / 1000) } ?? .null),
            JSONMember("dropped", .int(Int64(dropped))),
            JSONMember("outbox_error", outboxError.map { .string($0) } ?? .null),
            JSONMember("reconnects", .int(Int64(reconnects))),
            JSONMember("published", .int(Int64(published))),
            JSONMember("commands", .int(Int64(commands))),
            JSONMember("commands_refused", .int(Int64(commandsRefused))),
            JSONMember("ts", .string(Timestamp.iso8601(time))),
        ]
        if let bluetooth { members.insert(JSONMember("bluetooth", bluetooth.json), at: members.count - 1) }
        if let gateways { members.insert(JSONMember("gateways", gateways), at: members.count - 1) }
        for (key, counts) in [("auto_devices", autoDevices), ("match_instances", matchInstances)] {
            guard let counts else { continue }
            let value: JSONValue = .object([
                JSONMember("devices", .int(Int64(counts.devices))),
                JSONMember("evictions", .int(Int64(counts.evictions))),
                JSONMember("refusals", .int(Int64(counts.refusals))),
            ])
            members.insert(JSONMember(key, value), at: members.count - 1)
        }
        return .object(members)
    }
}
