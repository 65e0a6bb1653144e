import BlueZSimulator
import DBus
import Foundation
import TestSupport
import Testing

/// Passing mode: random private addresses appear (device objects while discovering), advertise for
/// their lifetime and are removed, leaving neither objects nor world entries behind.
@Suite struct PassingModeTests {
    @Test func passingDevicesAppearAndAreRemovedWithoutTrace() async throws {
        var scenario = Scenario(name: "passing", devices: [])
        scenario.timing = ScenarioTiming(
            advertisingInterval: .milliseconds(50), staleTimeout: .seconds(30), connectDelay: .milliseconds(1),
            resolveDelay: .milliseconds(1), connectTimeout: .seconds(3), mtu: 247)
        scenario.passing = ScenarioPassing(rate: 100, total: 30, lifetime: .milliseconds(300))
        try await SimulatorOnBus.run(scenario, seed: 17) { simulator, bus in
            let client = try await DBusConnection(address: bus.address)
            defer { client.close() }
            // The exports are seen by their InterfacesAdded signals (subscribed before discovery
            // starts), not by polling GetManagedObjects: a device lives 300 ms, and on a slow machine
            // every poll can fall outside all the lifetimes (under TSan at load 17 none saw one).
            let added = try await client.signals(
                matching: DBusMatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            let exported = Task {
                var paths: Set<String> = []
                for await signal in added {
                    guard let path = signal.arguments.first?.asObjectPath?.rawValue,
                        path.hasPrefix("/org/bluez/hci0/dev_")
                    else { continue }
                    paths.insert(path)
                    if paths.count == 30 { break }
                }
                return paths
            }
            _ = try await client.call(
                destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.bluez.Adapter1",
                method: "StartDiscovery")
            func devicePaths() async throws -> [String] {
                let objects = try await client.call(
                    destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                    method: "GetManagedObjects")
                return (objects.first?.asDictionaryEntries?.compactMap { $0.key.asObjectPath?.rawValue } ?? [])
                    .filter { $0.hasPrefix("/org/bluez/hci0/dev_") }
            }
            let allGone = await waitUntil(timeout: .seconds(10)) {
                await simulator.passingStatistics().gone == 30
            }
            // The stream is read by another task: it stops at 30 paths, or 5 s after the last
            // device went (time for signals still queued to be read) when fewer were exported.
            let stopReading = Task {
                await sleepRunnable(for: .seconds(5))
                exported.cancel()
            }
            let seen = await exported.value
            stopReading.cancel()
            let statistics = await simulator.passingStatistics()
            #expect(allGone, "\(statistics)")
            #expect(statistics.appeared == 30)
            #expect(!seen.isEmpty, "passing devices were exported while discovering")
            // Resolvable private addresses: the top two bits of the first byte are 01 (0x40–0x7F).
            #expect(
                seen.allSatisfy { path in
                    let first = path.dropFirst("/org/bluez/hci0/dev_".count).prefix(2)
                    return UInt8(first, radix: 16).map { $0 >> 6 == 0b01 } ?? false
                })
            #expect(try await devicePaths().isEmpty, "every device object was removed")
            #expect(await simulator.deviceAddresses().isEmpty, "the world forgot them")
        }
    }

    @Test func theScenarioKeyIsCheckedAndParsed() throws {
        let json = #"{"name": "p", "passing": {"rate": 200, "total": 30000, "lifetime": "2s", "start": "10s"}}"#
        let scenario = try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
        #expect(
            scenario.passing == ScenarioPassing(rate: 200, total: 30_000, lifetime: .seconds(2), start: .seconds(10)))
        for bad in [
            #"{"name": "p", "passing": {"rate": 0, "total": 1}}"#,
            #"{"name": "p", "passing": {"rate": 1, "total": 0}}"#,
            #"{"name": "p", "passing": {"rate": 1, "total": 1, "lifetime": "10ms"}}"#,
            #"{"name": "p", "passing": {"rate": 1, "total": 1, "speed": 3}}"#,
        ] {
            #expect(throws: (any Error).self, "\(bad)") {
                try JSONDecoder().decode(Scenario.self, from: Data(bad.utf8))
            }
        }
    }
}
