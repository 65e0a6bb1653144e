import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17, item 1 (the start), against the simulator, real mosquitto and the blebridge binary:
/// with `auto_devices` on and the demo's BTHome sensor and iBeacon left out of `devices`, both are
/// published under `<decoder>_<last 3 address bytes>` with Home Assistant discovery; passing
/// phones (random private addresses) never become devices.
@Suite(.serialized) struct AutoDevicesEndToEndTests {
    @Test func recognisedUnconfiguredAdvertisersArePublishedWithDiscovery() async throws {
        let world = try await SimulatedWorld(
            passing: ScenarioPassing(rate: 50, total: 150, lifetime: .seconds(1))
        ) { configuration in
            let devices = configuration["devices"] as? [[String: Any]] ?? []
            configuration["devices"] = devices.filter { !["bthome", "ibeacon"].contains($0["id"] as? String ?? "") }
            configuration["auto_devices"] = ["enabled": true, "max_devices": 10]
        }
        let bthome = await world.state("bthome_000003") { $0["temperature"] != nil && $0["rssi"] != nil }
        #expect(bthome != nil, "log: \(world.gateway.log.suffix(3000))")
        #expect(await world.state("ibeacon_000004") { $0["major"] != nil } != nil)
        let config = await world.recorder.first(on: "homeassistant/sensor/blebridge_bthome_000003/temperature/config")
        let temperature = try #require(config.flatMap(world.recorder.json))
        #expect(temperature["state_topic"] as? String == "blebridge/bthome_000003")
        #expect(temperature["device_class"] as? String == "temperature")
        #expect(
            await world.recorder.first(on: "blebridge/bthome_000003/availability") { $0.text == "online" } != nil)
        #expect(
            await waitUntil(timeout: .seconds(20)) { await world.simulator.passingStatistics().gone == 150 },
            "the passing phones walked by")
        let added = world.gateway.log.components(separatedBy: "automatic device added id=").count - 1
        #expect(
            added == 2,
            """
            only the BTHome sensor and the iBeacon: \(added): \(world.gateway.log.split(separator: "\n").filter {
                $0.contains("automatic device") }.joined(separator: "\n"))
            """)
        #expect(world.states("bthome").isEmpty, "the configured id is gone with the configuration entry")
        await world.shutdown()
    }
}
