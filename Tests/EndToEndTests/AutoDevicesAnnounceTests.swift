import BlueZSimulator
import Bluetooth
import Foundation
import TestSupport
import Testing

/// Issue 17: adding an automatic device announces that device only. Announcing the whole bridge
/// for each (all availability, all discovery) cost O(N²) retained messages to fill N devices.
@Suite(.serialized) struct AutoDevicesAnnounceTests {
    static let extra = 14

    @Test func addingAutomaticDevicesAnnouncesOnlyThem() async throws {
        let world = try await SimulatedWorld(
            edit: { configuration in
                let devices = configuration["devices"] as? [[String: Any]] ?? []
                configuration["devices"] = devices.filter {
                    !["bthome", "ibeacon"].contains($0["id"] as? String ?? "")
                }
                configuration["auto_devices"] = ["enabled": true, "max_devices": 50]
            },
            world: { scenario in
                guard let template = scenario.devices.first(where: { $0.id == "bthome" }) else { return }
                for index in 1...Self.extra {
                    var copy = template
                    copy.id = "bthome\(index)"
                    copy.address = BluetoothAddress(String(format: "C0:FF:EE:00:01:%02X", index))!
                    scenario.devices.append(copy)
                }
            })
        let ids = ["bthome_000003", "ibeacon_000004"] + (1...Self.extra).map { String(format: "bthome_0001%02x", $0) }
        for id in ids { await world.waitOnline(id) }
        let messages = world.recorder.all
        let availability = messages.filter { $0.topic.hasSuffix("/availability") }
        let discovery = messages.filter { $0.topic.hasPrefix("homeassistant/") }
        var perTopic: [String: Int] = [:]
        for message in discovery { perTopic[message.topic, default: 0] += 1 }
        for id in ids {
            perTopic["blebridge/\(id)/availability"] = availability.filter { $0.topic.contains("/\(id)/") }.count
        }
        let repeated = perTopic.filter { $0.value > 2 }.sorted { $0.key < $1.key }
        #expect(
            repeated.isEmpty,
            """
            \(ids.count) automatic devices: \(discovery.count) discovery and \(availability.count) availability \
            messages; published more than twice: \(repeated.prefix(10).map { "\($0.key) ×\($0.value)" })
            """)
        let devices = try #require(world.recorder.on("blebridge/bridge/devices").last)
        let listed = (try? JSONSerialization.jsonObject(with: Data(devices.payload))) as? [[String: Any]] ?? []
        let listedIDs = Set(listed.compactMap { $0["id"] as? String })
        #expect(Set(ids).isSubset(of: listedIDs), "bridge/devices lists every automatic device: \(listedIDs.sorted())")
        let origins = Dictionary(
            listed.compactMap { entry in
                (entry["id"] as? String).map { ($0, entry["origin"] as? String ?? "-") }
            }, uniquingKeysWith: { first, _ in first })
        #expect(ids.allSatisfy { origins[$0] == "automatic" }, "origins: \(origins)")
        print("auto devices \(ids.count): discovery \(discovery.count), availability \(availability.count)")
        await world.shutdown()
    }
}
