import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17's discovery bar, against the simulator's `discovery` scenario (30 sensors of mixed
/// families and 1,000 phones with random private addresses walking by), real mosquitto and the
/// blebridge binary with no `devices` at all: every sensor is published under its own
/// `<decoder>_<last 3 address bytes>` topic with Home Assistant discovery, and no phone becomes a
/// device. The encrypted LYWSD03MMC needs its key in `auto_devices.bind_keys`.
@Suite(.serialized) struct DiscoveryScenarioTests {
    /// The ids the 30 sensors get, from the scenario itself (so a family added to it is checked too).
    static func expectedIDs() throws -> [String: String] {
        let scenario = try Scenario.load("discovery")
        var ids: [String: String] = [:]
        for device in scenario.devices {
            let suffix = device.address.string.split(separator: ":").suffix(3).joined().lowercased()
            let decoder =
                switch device.id.split(separator: "_").first.map(String.init) ?? device.id {
                case "lywsd03mmc": "mibeacon"
                case let family: family
                }
            ids[device.id] = decoder + "_" + suffix
        }
        return ids
    }

    static func edit(_ configuration: inout [String: Any]) {
        configuration["devices"] = [[String: Any]]()
        configuration["commands"] = nil  // its raw GATT allowlist names the demo's lamp
        configuration["auto_devices"] = [
            "enabled": true, "max_devices": 100,
            "bind_keys": ["A4:C1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"],
        ]
    }

    @Test func everySensorIsPublishedWithDiscoveryAndNoConfigurationEntry() async throws {
        let ids = try Self.expectedIDs()
        #expect(ids.count == 30)
        let world = try await SimulatedWorld(scenario: "discovery", edit: Self.edit)
        let recorder = world.recorder
        func published(_ id: String) -> Bool {
            !world.states(id).filter { $0.count > 2 }.isEmpty
        }
        func announced(_ id: String) -> Bool {
            recorder.all.contains {
                $0.topic.hasPrefix("homeassistant/") && $0.topic.contains("/blebridge_\(id)/") && !$0.payload.isEmpty
            }
        }
        let all = await recorder.wait(timeout: .seconds(60)) { _ in
            ids.values.allSatisfy { published($0) && announced($0) }
        }
        let missing = ids.values.filter { !published($0) || !announced($0) }.sorted()
        #expect(all, "not published or not announced: \(missing); log: \(world.gateway.log.suffix(3000))")
        #expect(
            await waitUntil(timeout: .seconds(30)) { await world.simulator.passingStatistics().gone == 1_000 },
            "the passing phones walked by")
        let added = world.gateway.log.components(separatedBy: "automatic device added id=").count - 1
        #expect(added == 30, "the 30 sensors and no phone: \(added)")
        let temperature = await world.state(try #require(ids["lywsd03mmc"])) { $0["temperature"] != nil }
        #expect(temperature?["temperature"] as? Double == 21.5, "the encrypted one, with its key")
        let devices = await recorder.first(on: "blebridge/bridge/devices") { message in
            (try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [Any])?.count == 30
        }
        #expect(devices != nil, "bridge/devices lists the 30")
        await world.shutdown()
    }
}
