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

    /// Issue 17 (noticed in review): with `max_devices` 1 and `evict_after` 0 s the demo's BTHome
    /// sensor and iBeacon take each other's place; every drop is a `device_left` event saying why
    /// (not "removed from the configuration") and is counted in `bridge/health`.
    @Test func anEvictedDeviceLeavesWithTheReason() async throws {
        let world = try await SimulatedWorld(healthInterval: "1s") { configuration in
            let devices = configuration["devices"] as? [[String: Any]] ?? []
            configuration["devices"] = devices.filter { !["bthome", "ibeacon"].contains($0["id"] as? String ?? "") }
            configuration["auto_devices"] = ["enabled": true, "max_devices": 1, "evict_after": "0s"]
        }
        let left = await world.recorder.first(on: "blebridge/bridge/event", timeout: .seconds(30)) {
            world.recorder.json($0)?["type"] as? String == "device_left"
        }
        let data = left.flatMap(world.recorder.json)?["data"] as? [String: Any]
        #expect(
            (data?["reason"] as? String)?.hasPrefix("dropped to make room: auto_devices.max_devices reached") == true,
            "\(String(describing: left?.text)); log: \(world.gateway.log.suffix(2000))")
        let health = await world.recorder.first(on: "blebridge/bridge/health", timeout: .seconds(10)) {
            ((world.recorder.json($0)?["auto_devices"] as? [String: Any])?["evictions"] as? Int ?? 0) > 0
        }
        #expect(health != nil)
        await world.shutdown()
    }

    /// A stock LYWSD03MMC (encrypted MiBeacon v5, the frame of DecodeCommandTests) with its key in
    /// `auto_devices.bind_keys` becomes `mibeacon_565384` with Home Assistant discovery; the frame
    /// it repeats every advertisement is published once (packet-id de-duplication). Without the
    /// key it is never recognised.
    @Test(arguments: [true, false]) func anEncryptedXiaomiSensorWithItsBindKey(withKey: Bool) async throws {
        let device = try JSONDecoder().decode(
            ScenarioDevice.self,
            from: Data(
                #"""
                {"id": "lywsd03mmc", "address": "A4:C1:38:56:53:84", "name": "LYWSD03MMC", "connectable": false,
                 "advertisement": {"service_data": [{"uuid": "fe95",
                   "value": "58585b05a084535638c1a475dbc33f642301004a1668a5"}]}}
                """#.utf8))
        let world = try await SimulatedWorld(
            edit: { configuration in
                var auto: [String: Any] = ["enabled": true, "max_devices": 10]
                if withKey { auto["bind_keys"] = ["A4:C1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"] }
                configuration["auto_devices"] = auto
            },
            world: { $0.devices.append(device) })
        if withKey {
            let state = await world.state("mibeacon_565384") { $0["temperature"] != nil }
            #expect(state?["temperature"] as? Double == 21.5, "log: \(world.gateway.log.suffix(3000))")
            #expect(state?["model"] as? String == "LYWSD03MMC")
            let config = await world.recorder.first(
                on: "homeassistant/sensor/blebridge_mibeacon_565384/temperature/config")
            let temperature = try #require(config.flatMap(world.recorder.json))
            #expect(temperature["device_class"] as? String == "temperature")
            #expect((temperature["device"] as? [String: Any])?["manufacturer"] as? String == "Xiaomi")
            // The simulator repeats the frame in every advertisement (1 s apart): once the BTHome
            // sensor's packet id moved on by three (2 s each), several repeats have arrived.
            let first = await world.state("bthome") { $0["packet_id"] != nil }?["packet_id"] as? Int ?? 0
            #expect(await world.state("bthome") { ($0["packet_id"] as? Int ?? 0) >= first + 3 } != nil)
            let published = world.states("mibeacon_565384").compactMap { $0["packet_id"] as? Int }
            #expect(published == [160], "frame counter 160 published once: \(published)")
        } else {
            let first = await world.state("bthome") { $0["packet_id"] != nil }?["packet_id"] as? Int ?? 0
            #expect(await world.state("bthome") { ($0["packet_id"] as? Int ?? 0) >= first + 2 } != nil)
            #expect(
                world.states("mibeacon_565384").isEmpty
                    && !world.gateway.log.contains("automatic device added id=mibeacon"),
                "no key, not recognised")
        }
        await world.shutdown()
    }
}
