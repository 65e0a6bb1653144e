import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 21 item 4 with real parts: three `blebridge run` processes in shared-broker mode, each on
/// its own private bus with its own simulated adapter and its own room, one real mosquitto, all
/// hearing the demo's iBeacon (measured power −59 dBm) at their own RSSI. The beacon's room on
/// `blebridge/ibeacon/room` must follow an RSSI change within 10 s, without flapping, and move at
/// once when the nearest gateway dies. docs/multi-gateway.md, "Room presence".
@Suite(.serialized) struct MultiGatewayPresenceEndToEndTests {
    typealias View = MultiGatewayEndToEndTests.View
    static let rooms = ["gw-a": "kitchen", "gw-b": "living", "gw-c": "office"]
    /// dBm of the beacon per gateway at the start: nearest gw-a.
    static let rssi: [String: Int16] = ["gw-a": -55, "gw-b": -65, "gw-c": -75]
    static let beacon = "C0:FF:EE:00:00:04"
    static let room = "blebridge/ibeacon/room"

    static func scenario(_ id: String) throws -> Scenario {
        var scenario = try Scenario.load("demo")
        scenario.devices = scenario.devices.filter { $0.id == "ibeacon" }
        for index in scenario.devices.indices {
            scenario.devices[index].rssi = rssi[id] ?? -90
            scenario.devices[index].rssiJitter = 0
        }
        return scenario
    }

    static func configure(_ configuration: inout [String: Any]) {
        let configured = configuration["devices"] as? [[String: Any]] ?? []
        configuration["devices"] = configured.filter { $0["id"] as? String == "ibeacon" }
        var commands = configuration["commands"] as? [String: Any] ?? [:]
        commands["raw_gatt"] = nil
        configuration["commands"] = commands
        let id = configuration["gateway_id"] as? String ?? ""
        configuration["presence"] = ["room": rooms[id] ?? "attic"]
    }

    @Test func theRoomFollowsAnRSSIChangeWithin10SecondsWithoutFlappingAndMovesAtTheNearestGatewaysWill()
        async throws
    {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let members = try await MultiGatewayEndToEndTests.start(broker, scenario: Self.scenario, edit: Self.configure)
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        func rooms(after instant: Date) -> [String] {
            recorder.arrivals(on: Self.room).filter { $0.arrival > instant }.compactMap {
                recorder.json($0.message)?["room"] as? String
            }
        }
        func current() -> String? { recorder.on(Self.room).last.flatMap(recorder.json)?["room"] as? String }
        let started = Date()
        // Every gateway reports its presence; the room is the nearest one's.
        let presence = "blebridge/ibeacon/presence/"
        let settled = await recorder.wait(timeout: .seconds(40)) { _ in
            current() == "kitchen" && Self.rooms.keys.allSatisfy { !recorder.on(presence + $0).isEmpty }
        }
        #expect(settled, "room \(current() ?? "none")\n\(logs())")
        print(
            "multi-gateway presence: room kitchen \(Int(Date().timeIntervalSince(started) * 1000)) ms after the start")
        let distances = Self.rooms.keys.sorted().map {
            recorder.on(presence + $0).last.flatMap(recorder.json)?["distance_m"] as? Double ?? -1
        }
        // -55, -65, -75 dBm from -59 dBm at 1 m, n = 2.5: 0.69, 1.74, 4.37 m.
        #expect(distances[0] < distances[1] && distances[1] < distances[2], "\(distances)")
        #expect(abs(distances[0] - 0.69) < 0.05, "\(distances)")
        let report = recorder.on(presence + "gw-b").last.flatMap(recorder.json)
        #expect(report?["room"] as? String == "living" && report?["rssi"] as? Double == -65, "\(report ?? [:])")

        // The beacon moves away from gw-a (-55 → -85 dBm): gw-b (-65) is nearest, and the room
        // must follow within 10 s.
        let moved = Date()
        try await members["gw-a"]!.simulator.setRSSI(address: Self.beacon, -85)
        let followed = await recorder.wait(timeout: .seconds(30)) { _ in rooms(after: moved).contains("living") }
        let followedAt = recorder.arrivals(on: Self.room).first {
            $0.arrival > moved && recorder.json($0.message)?["room"] as? String == "living"
        }?.arrival
        let followMs = followedAt.map { Int($0.timeIntervalSince(moved) * 1000) }
        #expect(followed, "rooms after the move \(rooms(after: moved))\n\(logs())")
        #expect((followMs ?? .max) < 10_000, "the room followed after \(followMs.map { "\($0) ms" } ?? "never")")
        // It stays there: no flapping while the beacon's ownership moves to gw-b (6 dB, 10 s) and after.
        let quiet = Date()
        _ = await recorder.wait(timeout: .seconds(14)) { _ in rooms(after: quiet).contains { $0 != "living" } }
        #expect(Set(rooms(after: moved)) == ["living"], "\(rooms(after: moved))")

        // SIGKILL of gw-b: at its will the nearest left is gw-c (-75 against -85): office, at once.
        let killed = Date()
        members["gw-b"]!.gateway.process.signal(SIGKILL)
        await members["gw-b"]!.gateway.process.waitForExit()
        let office = await recorder.wait(timeout: .seconds(20)) { _ in rooms(after: killed).contains("office") }
        let officeAt = recorder.arrivals(on: Self.room).first {
            $0.arrival > killed && recorder.json($0.message)?["room"] as? String == "office"
        }?.arrival
        let officeMs = officeAt.map { Int($0.timeIntervalSince(killed) * 1000) }
        #expect(office, "rooms after the SIGKILL \(rooms(after: killed))\n\(logs())")
        #expect((officeMs ?? .max) < 10_000)
        print(
            "multi-gateway presence: RSSI change -> room \(followMs.map { "\($0) ms" } ?? "never"); "
                + "SIGKILL of the nearest -> room \(officeMs.map { "\($0) ms" } ?? "never"); "
                + "rooms after the move \(rooms(after: moved)); load \(MultiGatewayEndToEndTests.loadAverage())")

        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }
}
