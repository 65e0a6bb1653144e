import Decoders
import Foundation
import Gateway
import JSON
import Testing
import Timekeeping

@Suite struct PayloadTests {
    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_795_917_883.123_9)) == "2026-11-29T02:04:43.123Z")
    }

    @Test func deviceStateMergesFieldsAndStampsTheSampleTime() {
        var state = DeviceState()
        let first = state.merge(
            [
                DecodedField(name: "heart_rate", value: .int(72), unit: "bpm"),
                DecodedField(name: "rr_intervals", value: .array([.double(0.81)]), unit: "s"),
            ], rssi: -61, sampleTime: Date(timeIntervalSince1970: 10))
        #expect(first == ["heart_rate", "rr_intervals"])
        let second = state.merge(
            [
                DecodedField(name: "battery", value: .int(88), unit: "%"),
                DecodedField(name: "heart_rate", value: .int(75)),
            ],
            sampleTime: Date(timeIntervalSince1970: 11.5))
        #expect(second == ["battery"])
        #expect(
            String(decoding: state.payload, as: UTF8.self)
                == #"{"heart_rate":75,"rr_intervals":[0.81],"battery":88,"rssi":-61,"ts":"1970-01-01T00:00:11.500Z"}"#)
    }

    /// The state payload is written straight into bytes (``DeviceState/payload``): the same bytes as
    /// the `JSONValue` of its fields, RSSI and time would serialise to, for every shape a state takes,
    /// and it parses back to that value.
    @Test func theStatePayloadIsTheStateJSONsBytes() throws {
        var states: [DeviceState] = [DeviceState()]  // nothing yet: `{}`
        var state = DeviceState()
        state.merge([], rssi: -70, sampleTime: Date(timeIntervalSince1970: 1))  // RSSI and time only
        states.append(state)
        state = DeviceState()
        state.merge(
            [
                DecodedField(name: "raw_hex", value: .string("0a1b")),
                DecodedField(name: "quote \" and \\ and \n", value: .string("é \u{01} \"x\"")),
                DecodedField(
                    name: "nested", value: .object([DecodedField(name: "a", value: .array([.null, .bool(true)]))])),
                DecodedField(name: "temperature", value: .double(21.25)),
                DecodedField(name: "count", value: .int(-3)),
                DecodedField(name: "button", value: .string("press"), kind: .event("button", types: ["press"])),
            ], sampleTime: Date(timeIntervalSince1970: 1_780_000_000.123_456))
        states.append(state)
        state.merge(
            [DecodedField(name: "count", value: .int(4))], rssi: -1, sampleTime: Date(timeIntervalSince1970: -1.5))
        states.append(state)
        // A date beyond year 9999 takes the extended form.
        state.merge([], sampleTime: Date(timeIntervalSince1970: 300_000_000_000))
        states.append(state)
        for state in states {
            var members = state.fields
            if let rssi = state.rssi { members.append(JSONMember("rssi", .int(Int64(rssi)))) }
            if let time = state.sampleTime { members.append(JSONMember("ts", .string(Timestamp.iso8601(time)))) }
            let expected = JSONValue.object(members)
            #expect(state.payload == expected.bytes, "\(expected.serialized)")
            #expect(try JSONParser().parse(state.payload) == expected)
        }
        #expect(String(decoding: states[0].payload, as: UTF8.self) == "{}")
    }

    @Test func bridgePayloads() {
        #expect(BridgePayloads.online.serialized == #"{"state":"online"}"#)
        #expect(BridgePayloads.offline.serialized == #"{"state":"offline"}"#)
        let health = HealthSnapshot(
            uptime: .seconds(61), connections: 2, maxConnections: 5, outboxDepth: 3,
            oldestUnsentAge: .milliseconds(1500),
            dropped: 0, reconnects: 1, published: 10, commands: 4, commandsRefused: 1,
            time: Date(timeIntervalSince1970: 0))
        #expect(
            health.json.serialized
                == #"{"uptime_s":61,"connections":2,"max_connections":5,"outbox_depth":3,"oldest_unsent_age_s":1.5,"dropped":0,"outbox_error":null,"reconnects":1,"published":10,"commands":4,"commands_refused":1,"ts":"1970-01-01T00:00:00.000Z"}"#
        )
        var degraded = health
        degraded.outboxError = HealthSnapshot.outboxErrorName("diskFull")
        #expect(degraded.json["outbox_error"] == "disk_full")
        var automatic = health
        automatic.autoDevices = HealthSnapshot.AutoDeviceCounts(devices: 100, evictions: 2, refusals: 7)
        #expect(
            automatic.json["auto_devices"]?.serialized == #"{"devices":100,"evictions":2,"refusals":7}"#,
            "with auto_devices on")
        #expect(health.json["auto_devices"] == nil, "left out with auto_devices off")
        automatic.matchInstances = HealthSnapshot.AutoDeviceCounts(devices: 3, evictions: 1, refusals: 4)
        #expect(
            automatic.json.serialized.hasSuffix(
                #""auto_devices":{"devices":100,"evictions":2,"refusals":7},"match_instances":{"devices":3,"evictions":1,"refusals":4},"ts":"1970-01-01T00:00:00.000Z"}"#
            ))
        #expect(health.json["match_instances"] == nil, "left out without a match lacking an address")
        #expect(HealthSnapshot.outboxErrorName("locked") == "locked")
        #expect(HealthSnapshot.outboxErrorName("schemaTooNew") == "schema_too_new")
        let device = DeviceSummary(
            id: "lamp", name: "Lamp", address: "C0:FF:EE:00:00:05", connection: "connect_on_demand", connected: true,
            rssi: -50, lastSeen: nil, services: ["180f"])
        #expect(device.json["connected"] == .bool(true))
        #expect(device.json["origin"] == .string("configured"))
        let adopted = DeviceSummary(
            id: "kitchen", name: "Kitchen", origin: .adopted, address: nil, connection: "passive", connected: false,
            rssi: nil, lastSeen: nil, services: [])
        #expect(
            adopted.json(stable: true).serialized.hasPrefix(#"{"id":"kitchen","name":"Kitchen","origin":"adopted","#))
        #expect(device.json["last_seen"] == .null)
    }
}
