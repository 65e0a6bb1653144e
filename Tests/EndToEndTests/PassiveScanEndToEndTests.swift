import BlueZSimulator
import Bluetooth
import Foundation
import TestSupport
import Testing

/// Issue 17: `bluetooth.scan.mode` `"passive"` listens through BlueZ's advertisement monitors and
/// never starts a discovery session (an active scan). Without `AdvertisementMonitorManager1` (the
/// simulator's default, as bluetoothd without experimental features) `blebridge run` stops at
/// start with exit status 78 and says what is missing.
@Suite(.serialized) struct PassiveScanEndToEndTests {
    static let pvvx = "A4:C1:38:13:00:01"

    static func passive(_ configuration: inout [String: Any]) {
        var bluetooth = configuration["bluetooth"] as? [String: Any] ?? [:]
        var scan = bluetooth["scan"] as? [String: Any] ?? [:]
        scan["mode"] = "passive"
        bluetooth["scan"] = scan
        configuration["bluetooth"] = bluetooth
    }

    @Test func passiveModeWithoutAdvertisementMonitorsStopsAtStartNamingWhatIsMissing() async throws {
        let world = try await SimulatedWorld { Self.passive(&$0) }
        let status = await world.gateway.process.waitForExit(timeout: .seconds(30))
        let log = world.gateway.log
        #expect(status == 78, "log: \(log.suffix(3000))")
        #expect(log.contains("monitor_unsupported"), "\(log.suffix(3000))")
        #expect(log.contains("no org.bluez.AdvertisementMonitorManager1"), "\(log.suffix(3000))")
        #expect(log.contains("set bluetooth.scan.mode to \"active\""), "\(log.suffix(3000))")
        #expect(world.states("bthome").isEmpty, "nothing was scanned actively")
        #expect(await world.simulator.startDiscoveryCount == 0)
        await world.shutdown()
    }

    /// BTHome and pvvx readings reach a real mosquitto through or-pattern monitors; the simulator
    /// saw no `StartDiscovery`.
    @Test(arguments: [ScenarioAdapter.AdvertisementMonitorMode.software, .controller])
    func passiveModePublishesThroughAdvertisementMonitors(_ mode: ScenarioAdapter.AdvertisementMonitorMode)
        async throws
    {
        let world = try await SimulatedWorld(
            edit: { configuration in
                Self.passive(&configuration)
                var devices = configuration["devices"] as? [[String: Any]] ?? []
                devices.append([
                    "id": "pvvx", "match": ["address": Self.pvvx], "connection": "passive",
                    "advertisement": ["decoder": "pvvx"],
                ])
                configuration["devices"] = devices
            },
            world: { scenario in
                scenario.adapter.advertisementMonitor = mode
                scenario.devices.append(
                    ScenarioDevice(
                        id: "pvvx", address: BluetoothAddress(Self.pvvx)!, name: "ATC_130001", rssi: -66,
                        connectable: false,
                        advertisement: ScenarioAdvertisement(serviceData: [
                            .init(
                                uuid: BluetoothUUID(UInt16(0x181A)), value: Hex.bytes("01001338c1a434088813b80b5a000f")!
                            )
                        ])))
            })
        let bthome = await world.state("bthome", timeout: .seconds(30)) { $0["temperature"] != nil }
        let pvvx = await world.state("pvvx", timeout: .seconds(30)) { $0["temperature"] != nil }
        let log = world.gateway.log
        #expect(bthome != nil, "\(log.suffix(3000))")
        #expect((pvvx?["temperature"] as? Double).map { abs($0 - 21.0) < 0.01 } == true, "\(String(describing: pvvx))")
        #expect(log.contains("scanning passively through advertisement monitors"), "\(log.suffix(3000))")
        #expect(await world.simulator.startDiscoveryCount == 0, "no discovery session: nothing scanned actively")
        let applications = await world.simulator.monitorApplications()
        #expect(applications.count == 1 && applications[0].monitors.count >= 2, "\(applications)")
        await world.shutdown()
    }
}
