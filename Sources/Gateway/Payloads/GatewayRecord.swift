import Foundation
import JSON
import Timekeeping

/// `<base>/bridge/gateways/<gateway_id>` in shared-broker mode (retained; docs/multi-gateway.md):
/// what one gateway is and how much room it has. The same topic carries the gateway's state, so
/// its last will (``offline(gatewayID:)``) and Home Assistant's availability template
/// (`{{ value_json.state }}`) read it as they read `bridge/state` in single-gateway mode.
package struct GatewayRecord: Sendable, Hashable {
    package enum State: String, Sendable, Hashable {
        case online, offline
    }

    package var state: State
    package var gatewayID: String
    /// Nil in an offline record (the last will is fixed at connect time and says only the state).
    package var version: String?
    package var adapter: String?
    package var maxConnections: Int?
    /// Connection slots not in use: `max_connections` minus the devices connected.
    package var freeSlots: Int?
    /// The devices connected now.
    package var connections: Int?
    /// Readings published per second over the last health interval.
    package var readingsPerSecond: Double?
    package var started: Date?

    package init(
        state: State, gatewayID: String, version: String? = nil, adapter: String? = nil, maxConnections: Int? = nil,
        freeSlots: Int? = nil, connections: Int? = nil, readingsPerSecond: Double? = nil, started: Date? = nil
    ) {
        self.state = state
        self.gatewayID = gatewayID
        self.version = version
        self.adapter = adapter
        self.maxConnections = maxConnections
        self.freeSlots = freeSlots
        self.connections = connections
        self.readingsPerSecond = readingsPerSecond
        self.started = started
    }

    /// The last will and the clean-shutdown record: `{"state":"offline","gateway_id":"…"}`.
    package static func offline(gatewayID: String) -> GatewayRecord {
        GatewayRecord(state: .offline, gatewayID: gatewayID)
    }

    package var json: JSONValue {
        var members = [JSONMember("state", .string(state.rawValue)), JSONMember("gateway_id", .string(gatewayID))]
        if let version { members.append(JSONMember("version", .string(version))) }
        if let adapter { members.append(JSONMember("adapter", .string(adapter))) }
        if let maxConnections { members.append(JSONMember("max_connections", .int(Int64(maxConnections)))) }
        if let freeSlots { members.append(JSONMember("free_slots", .int(Int64(freeSlots)))) }
        if connections != nil || readingsPerSecond != nil {
            var load: [JSONMember] = []
            if let connections { load.append(JSONMember("connections", .int(Int64(connections)))) }
            if let readingsPerSecond {
                load.append(JSONMember("readings_per_s", .double((readingsPerSecond * 10).rounded() / 10)))
            }
            members.append(JSONMember("load", .object(load)))
        }
        if let started { members.append(JSONMember("started", .string(Timestamp.iso8601(started)))) }
        return .object(members)
    }

    /// Reads a record another gateway published; nil when it is not one (not JSON, no `state`,
    /// an unknown state). `gatewayID` is the topic's last level, which wins over the payload's.
    package init?(payload: [UInt8], gatewayID: String) {
        guard let value = try? JSONParser().parse(payload), let state = value["state"]?.stringValue.flatMap(State.init)
        else { return nil }
        self.init(state: state, gatewayID: gatewayID)
        version = value["version"]?.stringValue
        adapter = value["adapter"]?.stringValue
        maxConnections = value["max_connections"]?.intValue.map { Int($0) }
        freeSlots = value["free_slots"]?.intValue.map { Int($0) }
        connections = value["load"]?["connections"]?.intValue.map { Int($0) }
        readingsPerSecond = value["load"]?["readings_per_s"]?.doubleValue
    }
}
