import Foundation
import TestSupport
import Testing

/// Issue 17, item 3, against the simulator, real mosquitto and the blebridge binary: the demo's
/// BTHome sensor repeats each packet in every advertisement (and BlueZ reports each RSSI change),
/// the iBeacon never changes. By default no BTHome packet id is published twice; `only_on_change`
/// publishes the iBeacon once; `min_interval` spaces the BTHome readings; both stay online.
@Suite(.serialized) struct LessNoiseEndToEndTests {
    /// Runs the demo for `seconds` with `edit` applied to the devices; returns the world.
    static func run(seconds: Int, _ edit: @escaping ([String: Any]) -> [String: Any]) async throws -> SimulatedWorld {
        let world = try await SimulatedWorld { configuration in
            let devices = configuration["devices"] as? [[String: Any]] ?? []
            configuration["devices"] = devices.map(edit)
        }
        _ = await world.state("bthome") { $0["temperature"] != nil }
        try await Task.sleep(for: .seconds(seconds))
        return world
    }

    static func packetIDs(_ world: SimulatedWorld) -> [Int] {
        world.states("bthome").compactMap { $0["packet_id"] as? Int }
    }

    @Test func bthomeRepeatsAreDroppedByDefaultAndKeptWhenAsked() async throws {
        let world = try await Self.run(seconds: 8) { device in
            var device = device
            if device["id"] as? String == "ibeacon" { device["only_on_change"] = true }
            return device
        }
        let ids = Self.packetIDs(world)
        #expect(ids.count >= 3, "packet ids: \(ids); log: \(world.gateway.log.suffix(2000))")
        #expect(Set(ids).count == ids.count, "a packet id was published twice: \(ids)")
        let beacons = world.states("ibeacon")
        #expect(beacons.count == 1, "only_on_change: \(beacons.count) iBeacon states")
        #expect(await world.recorder.first(on: "blebridge/ibeacon/availability") { $0.text == "online" } != nil)
        await world.shutdown()

        let repeating = try await Self.run(seconds: 8) { device in
            var device = device
            if device["id"] as? String == "bthome" { device["deduplicate"] = false }
            return device
        }
        let repeated = Self.packetIDs(repeating)
        #expect(Set(repeated).count < repeated.count, "deduplicate false keeps repeats: \(repeated)")
        #expect(repeating.states("ibeacon").count > 1, "without only_on_change every advertisement is published")
        await repeating.shutdown()
    }

    @Test func minIntervalSpacesTheReadings() async throws {
        let world = try await Self.run(seconds: 9) { device in
            var device = device
            if device["id"] as? String == "bthome" { device["min_interval"] = "4s" }
            return device
        }
        let states = world.states("bthome")
        // About 9–10 s of readings at most one per 4 s: three at the most.
        #expect((1...3).contains(states.count), "\(states.count) states: \(Self.packetIDs(world))")
        #expect(await world.recorder.first(on: "blebridge/bthome/availability") { $0.text == "online" } != nil)
        await world.shutdown()
    }
}
