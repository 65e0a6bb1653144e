import Foundation
import JSON
import Timekeeping

/// The other gateways on the broker in shared-broker mode, from their retained records on
/// `<base>/bridge/gateways/+` (docs/multi-gateway.md). Pure: the gateway feeds it every record
/// message with the time it arrived and publishes what changed.
package struct GatewayPeers: Sendable {
    package struct Peer: Sendable, Hashable {
        package var record: GatewayRecord
        /// When its state (online or offline) last changed, as this gateway heard it.
        package var since: Date
    }

    /// What a record message changed.
    package enum Change: Sendable, Hashable {
        /// A gateway not known before, online or offline.
        case joined(String, GatewayRecord.State)
        /// A known gateway changed state (`offline`: its last will or its clean shutdown).
        case state(String, GatewayRecord.State)
        /// Same state, other figures (free slots, load).
        case updated(String)
        /// Its retained record was cleared (an empty payload): it left the installation.
        case removed(String)
        /// Not a record (not JSON, no known `state`): ignored, the previous one is kept.
        case invalid(String)
        /// This gateway's own record, or nothing changed.
        case none
    }

    /// This gateway's id (its own record is not a peer).
    package let me: String
    package private(set) var peers: [String: Peer] = [:]

    package init(me: String) {
        self.me = me
    }

    package mutating func received(gatewayID id: String, payload: [UInt8], at now: Date) -> Change {
        guard id != me else { return .none }
        if payload.isEmpty {
            return peers.removeValue(forKey: id) == nil ? .none : .removed(id)
        }
        guard let record = GatewayRecord(payload: payload, gatewayID: id) else { return .invalid(id) }
        guard let known = peers[id] else {
            peers[id] = Peer(record: record, since: now)
            return .joined(id, record.state)
        }
        guard known.record != record else { return .none }
        let stateChanged = known.record.state != record.state
        peers[id] = Peer(record: record, since: stateChanged ? now : known.since)
        return stateChanged ? .state(id, record.state) : .updated(id)
    }

    /// The ids of the peers whose record says online.
    package var online: Set<String> { Set(peers.filter { $0.value.record.state == .online }.keys) }

    /// `gateways` in `bridge/health`: each peer by id, with its state, since when, and its figures.
    package var json: JSONValue {
        .array(
            peers.keys.sorted().compactMap { id in
                guard let peer = peers[id] else { return nil }
                var members = [
                    JSONMember("id", .string(id)), JSONMember("state", .string(peer.record.state.rawValue)),
                    JSONMember("since", .string(Timestamp.iso8601(peer.since))),
                ]
                if let version = peer.record.version { members.append(JSONMember("version", .string(version))) }
                if let adapter = peer.record.adapter { members.append(JSONMember("adapter", .string(adapter))) }
                if let slots = peer.record.freeSlots { members.append(JSONMember("free_slots", .int(Int64(slots)))) }
                return .object(members)
            })
    }
}
