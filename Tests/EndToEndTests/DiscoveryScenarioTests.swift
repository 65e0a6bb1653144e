import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17's discovery bar, against the simulator's `discovery` scenario (30 sensors of 18
/// decoders, from BTHome to Govee, SwitchBot, Qingping, Victron and the Xiaomi scales, and 1,000
/// phones with random private addresses walking by), real mosquitto and the blebridge binary with
/// no `devices` at all: every sensor is published under its own `<decoder>_<last 3 address bytes>`
/// topic with Home Assistant discovery, and no phone becomes a device. The encrypted LYWSD03MMC and
/// the Victron need their keys in `auto_devices.bind_keys` (no device entry).
@Suite(.serialized) struct DiscoveryScenarioTests {
    /// The ids the 30 sensors get, from the scenario itself (so a family added to it is checked too):
    /// its ids are `<decoder>_<n>` (`miscale_v2_1`), and `lywsd03mmc` is a MiBeacon.
    static func expectedIDs() throws -> [String: String] {
        let scenario = try Scenario.load("discovery")
        var ids: [String: String] = [:]
        for device in scenario.devices {
            let suffix = device.address.string.split(separator: ":").suffix(3).joined().lowercased()
            ids[device.id] = decoder(of: device.id) + "_" + suffix
        }
        return ids
    }

    /// The decoder of the scenario device `id`: the id without its `_<n>` tail.
    static func decoder(of id: String) -> String {
        if id == "lywsd03mmc" { return "mibeacon" }
        return id.lastIndex(of: "_").map { String(id[..<$0]) } ?? id
    }

    /// The keys of the scenario's encrypted sensors: the LYWSD03MMC's MiBeacon key, the Victron's
    /// advertisement key.
    static let bindKeys = [
        "A4:C1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99",
        "C0:FF:EE:17:03:01": "0df4d0617b6c4e1b9d3f1a2b3c4d5e6f",
    ]

    static func edit(_ configuration: inout [String: Any]) {
        edit(&configuration, lists: [:])
    }

    /// No devices, `auto_devices` on with the encrypted sensors' keys and `lists` (`allow`, `deny`).
    static func edit(_ configuration: inout [String: Any], lists: [String: Any]) {
        configuration["devices"] = [[String: Any]]()
        configuration["commands"] = nil  // its raw GATT allowlist names the demo's lamp
        configuration["auto_devices"] = [
            "enabled": true, "max_devices": 100, "bind_keys": bindKeys,
        ].merging(lists) { $1 }
    }

    /// `auto_devices.deny` by decoder and by address prefix, and `allow` by name: only the
    /// sensors every list lets through become devices.
    @Test func allowAndDenyListsPickTheSensors() async throws {
        let ids = try Self.expectedIDs()
        let world = try await SimulatedWorld(scenario: "discovery") { configuration in
            Self.edit(
                &configuration,
                lists: [
                    "deny": ["decoders": ["eddystone"], "addresses": ["A4:C1:38:13"], "names": ["BTHome 4"]],
                    "allow": ["names": ["BTHome*", "ATC_*", "Ruuvi*"]],
                ])
        }
        // BTHome 1-3, ATC1441 (named ATC_12…), Ruuvi; not pvvx (A4:C1:38:13, also named ATC_13…),
        // not BTHome 4, not the unnamed iBeacon and Eddystone, not the other families' names.
        let wanted =
            ids.filter { $0.key.hasPrefix("bthome_") && $0.key != "bthome_4" }.map(\.value)
            + ids.filter { $0.key.hasPrefix("atc1441_") || $0.key.hasPrefix("ruuvi_") }.map(\.value)
        #expect(wanted.count == 7)
        let all = await world.recorder.wait(timeout: .seconds(60)) { _ in
            wanted.allSatisfy { !world.states($0).isEmpty }
        }
        #expect(all, "missing: \(wanted.filter { world.states($0).isEmpty }); log: \(world.gateway.log.suffix(2000))")
        // Every sensor has advertised several times meanwhile (1 s apart); now the phones too.
        #expect(await waitUntil(timeout: .seconds(30)) { await world.simulator.passingStatistics().gone == 1_000 })
        let others = Set(ids.values).subtracting(wanted).filter { !world.states($0).isEmpty }
        #expect(others.isEmpty, "refused by the lists but published: \(others.sorted())")
        let added = world.gateway.log.components(separatedBy: "automatic device added id=").count - 1
        #expect(added == 7, "\(added)")
        await world.shutdown()
    }

    @Test func everySensorIsPublishedWithDiscoveryAndNoConfigurationEntry() async throws {
        let ids = try Self.expectedIDs()
        #expect(ids.count == 30)
        #expect(Set(ids.values).count == 30, "each sensor its own topic")
        let families = Dictionary(grouping: ids.keys, by: Self.decoder(of:)).mapValues(\.count)
        print("discovery scenario: \(ids.count) sensors, per decoder: \(families.sorted { $0.key < $1.key })")
        #expect(families.count == 18, "\(families.keys.sorted())")
        let world = try await SimulatedWorld(scenario: "discovery", edit: Self.edit)
        let start = ContinuousClock.now
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
        print("discovery scenario: all 30 published and announced after \(ContinuousClock.now - start)")
        #expect(
            await waitUntil(timeout: .seconds(30)) { await world.simulator.passingStatistics().gone == 1_000 },
            "the passing phones walked by")
        let added = world.gateway.log.components(separatedBy: "automatic device added id=").count - 1
        #expect(added == 30, "the 30 sensors and no phone: \(added)")
        let temperature = await world.state(try #require(ids["lywsd03mmc"])) { $0["temperature"] != nil }
        #expect(temperature?["temperature"] as? Double == 21.5, "the encrypted one, with its key")
        let solar = await world.state(try #require(ids["victron_1"])) { $0["battery_voltage"] != nil }
        #expect(solar?["battery_voltage"] as? Double == 13.45, "the Victron, with its advertisement key")
        let devices = await recorder.first(on: "blebridge/bridge/devices") { message in
            (try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [Any])?.count == 30
        }
        #expect(devices != nil, "bridge/devices lists the 30")
        await world.shutdown()
    }
}
