import Foundation
import JSON
import Timekeeping

/// What one gateway publishes about one device it hears, on `<base>/<device>/presence/<gateway_id>`
/// (not retained; docs/multi-gateway.md, "Room presence"):
/// `{"rssi":-63.4,"distance_m":2.51,"room":"kitchen","ts":"2026-12-02T06:00:00.000Z"}`.
package struct PresenceReport: Sendable, Hashable {
    /// The smoothed RSSI, dBm, one decimal.
    package var rssi: Double
    /// The distance estimate, metres, two decimals.
    package var distance: Double
    /// The publishing gateway's room (`presence.room`).
    package var room: String
    /// When it was sampled; nil when a received report has none.
    package var time: Date?

    package init(rssi: Double, distance: Double, room: String, time: Date? = nil) {
        self.rssi = (rssi * 10).rounded() / 10
        self.distance = (distance * 100).rounded() / 100
        self.room = room
        self.time = time
    }

    package var json: JSONValue {
        var members = [
            JSONMember("rssi", .double(rssi)), JSONMember("distance_m", .double(distance)),
            JSONMember("room", .string(room)),
        ]
        if let time { members.append(JSONMember("ts", .string(Timestamp.iso8601(time)))) }
        return .object(members)
    }

    /// Reads a report a gateway published; nil when it is not one (not JSON, a member missing or
    /// of the wrong type, an RSSI outside -127…20 dBm, a negative or non-finite distance, an empty room).
    package init?(payload: [UInt8]) {
        guard let value = try? JSONParser().parse(payload), let rssi = value["rssi"]?.doubleValue,
            let distance = value["distance_m"]?.doubleValue, let room = value["room"]?.stringValue,
            (-127...20).contains(rssi), distance.isFinite, distance >= 0, !room.isEmpty
        else { return nil }
        self.init(rssi: rssi, distance: distance, room: room)
    }
}
