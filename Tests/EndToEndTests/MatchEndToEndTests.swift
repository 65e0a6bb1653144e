import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17, item 2, against the simulator, real mosquitto and the blebridge binary: `match.service`
/// catches a sensor that only carries service data, and a `name_prefix` match that catches two
/// sensors publishes each under its own id instead of alternating between them in one topic.
@Suite(.serialized) struct MatchEndToEndTests {
    static let scenario = #"""
        {
          "name": "two-atc",
          "description": "Two BTHome sensors whose names share a prefix, and a third one with service data only.",
          "devices": [
            {
              "id": "cold", "address": "A4:C1:38:8D:18:B2", "name": "ATC_8D18B2", "connectable": false, "rssi": -60,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 19.5, "drift": 0.5, "humidity": 52, "start": 88}}],
                "update_interval": "500ms"
              }
            },
            {
              "id": "hot", "address": "A4:C1:38:CF:01:56", "name": "ATC_CF0156", "connectable": false, "rssi": -61,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 35.0, "drift": 0.5, "humidity": 40, "start": 50}}],
                "update_interval": "500ms"
              }
            },
            {
              "id": "plain", "address": "C0:FF:EE:00:00:07", "connectable": false, "rssi": -70,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 5.0, "drift": 0.5, "humidity": 60, "start": 70}}],
                "update_interval": "500ms"
              }
            }
          ]
        }
        """#

    @Test func eachSensorAMatchCatchesGetsItsOwnIDAndServiceDataMatches() async throws {
        let directory = try TemporaryDirectory(prefix: "match-e2e")
        let scenario = try directory.write("two-atc.json", Self.scenario)
        let world = try await SimulatedWorld(scenario: scenario.path) { configuration in
            configuration["commands"] = [String: Any]()
            configuration["devices"] = [
                [
                    "id": "one", "match": ["name_prefix": "ATC_"], "connection": "passive",
                    "advertisement": ["decoder": "bthome"],
                ],
                [
                    "id": "bt", "match": ["service": "fcd2"], "connection": "passive",
                    "advertisement": ["decoder": "bthome"],
                ],
            ]
        }
        #expect(
            await world.state("bt") { $0["temperature"] != nil } != nil,
            "service data alone must satisfy match.service; log: \(world.gateway.log.suffix(2000))")
        let instances = ["one_8d18b2", "one_cf0156"]
        var other: String?
        for id in instances {
            if await world.state(id, timeout: .seconds(15), where: { $0["temperature"] != nil }) != nil { other = id }
        }
        let instance = try #require(other, "no instance topic; log: \(world.gateway.log.suffix(3000))")
        // Let both publish a few readings, then check no topic mixes the two sensors.
        _ = await world.state("one") { _ in world.states("one").count >= 4 }
        _ = await world.state(instance) { _ in world.states(instance).count >= 4 }
        for id in ["one", instance] {
            let temperatures = world.states(id).compactMap { $0["temperature"] as? Double }
            #expect(temperatures.count >= 2, "\(id): \(temperatures)")
            #expect(
                temperatures.allSatisfy { $0 < 27 } || temperatures.allSatisfy { $0 > 27 },
                "\(id) mixes the two sensors: \(temperatures)")
        }
        let config = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_\(instance)/temperature/config")
        #expect(config.flatMap(world.recorder.json)?["state_topic"] as? String == "blebridge/\(instance)")
        #expect(world.states("bt").allSatisfy { (($0["temperature"] as? Double) ?? 0) < 15 })

        // Restart with the sensor that is "one" out of range: the other one advertises first, and
        // still keeps its instance id (the assignment is stored), then "one" comes back as "one".
        let oneIsCold = (world.states("one").first?["temperature"] as? Double ?? 0) < 27
        let oneAddress = oneIsCold ? "A4:C1:38:8D:18:B2" : "A4:C1:38:CF:01:56"
        world.gateway.process.signal(SIGTERM)
        #expect(await world.gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        try await world.simulator.setDeviceInRange(address: oneAddress, false)
        let (instanceBefore, oneBefore) = (world.states(instance).count, world.states("one").count)
        let second = try GatewayProcess(restarting: world.gateway)
        #expect(
            await world.state(instance) { _ in world.states(instance).count >= instanceBefore + 2 } != nil,
            "log: \(second.log.suffix(3000))")
        #expect(world.states("one").count == oneBefore, "the other sensor must not take the plain id")
        try await world.simulator.setDeviceInRange(address: oneAddress, true)
        #expect(await world.state("one") { _ in world.states("one").count >= oneBefore + 2 } != nil)
        for id in ["one", instance] {
            let temperatures = world.states(id).compactMap { $0["temperature"] as? Double }
            #expect(
                temperatures.allSatisfy { $0 < 27 } || temperatures.allSatisfy { $0 > 27 },
                "\(id) mixes the two sensors after the restart: \(temperatures)")
        }
        #expect(second.log.contains("match instances, automatic and adopted devices restored"))
        await second.process.stop(grace: .seconds(10))
        await world.shutdown()
    }
}
