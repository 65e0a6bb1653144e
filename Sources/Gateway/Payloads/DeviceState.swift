import Decoders
import Foundation
import JSON
import Timekeeping

/// A device's merged state: the latest value of every decoded field, the RSSI and the time
/// of the sample that last changed it. Published on `<base>/<device>` as one JSON object,
/// e.g. `{"heart_rate":72,"rr_intervals":[0.81],"battery":88,"rssi":-61,"ts":"2026-…Z"}`.
package struct DeviceState: Sendable, Hashable {
    /// Field name → value, in first-seen order.
    package private(set) var fields: [JSONMember] = []
    package private(set) var rssi: Int?
    package private(set) var sampleTime: Date?
    /// The event fields (a button's press: kind ``FieldKind/Component/event``) of the latest
    /// reading. An event happened once: it is in the state published with the reading that carried
    /// it and left out of the next, or every later publish (a temperature) would repeat the press.
    package private(set) var events: Set<String> = []
    /// The event fields the latest merge removed (the previous reading's).
    package private(set) var clearedEvents: Set<String> = []

    package init() {}

    /// Merges decoded fields taken at `sampleTime`; returns the names seen for the first time.
    @discardableResult
    package mutating func merge(_ decoded: [DecodedField], rssi: Int? = nil, sampleTime: Date) -> [String] {
        clearedEvents = events
        if !events.isEmpty {
            fields.removeAll { events.contains($0.key) }
            events = []
        }
        var newNames: [String] = []
        for field in decoded where field.name != "rssi" && field.name != "ts" {
            if field.kind.component == .event { events.insert(field.name) }
            let value = JSONValue(field.value)
            if let index = fields.firstIndex(where: { $0.key == field.name }) {
                fields[index].value = value
            } else {
                fields.append(JSONMember(field.name, value))
                newNames.append(field.name)
            }
        }
        if let rssi { self.rssi = rssi }
        self.sampleTime = sampleTime
        return newNames
    }

    /// The payload for `<base>/<device>`: the fields in first-seen order, then `rssi` and `ts`,
    /// written at once into one array (a reading's state built as a `JSONValue` first cost five
    /// allocations more, issue 20).
    package var payload: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        output.append(UInt8(ascii: "{"))
        for member in fields {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(member.key, to: &output)
            output.append(UInt8(ascii: ":"))
            member.value.write(to: &output)
        }
        if let rssi {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #""rssi":"#.utf8)
            JSONValue.int(Int64(rssi)).write(to: &output)
        }
        if let sampleTime {
            if output.count > 1 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #""ts":""#.utf8)
            Timestamp.appendISO8601(sampleTime, to: &output)
            output.append(UInt8(ascii: "\""))
        }
        output.append(UInt8(ascii: "}"))
        return output
    }
}
