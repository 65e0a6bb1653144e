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
        // The failed start was stopped before the exit (`Gateway.run`): links undone, `offline`
        // published, a clean DISCONNECT, rather than left to the broker's will.
        #expect(log.contains("[gateway] stopped"), "\(log.suffix(3000))")
        #expect(world.states("bthome").isEmpty, "nothing was scanned actively")
        #expect(await world.simulator.startDiscoveryCount == 0)
        await world.shutdown()
    }

    /// BTHome and pvvx readings reach a real mosquitto through or-pattern monitors; the simulator
    /// saw no `StartDiscovery`. In software with bluetoothd 5.66's matching and with 5.71's (a
    /// service-data pattern starts after the UUID: before the markers, nothing arrived there), and
    /// with a controller filtering.
    @Test(arguments: [
        (ScenarioAdapter.AdvertisementMonitorMode.software, AdvertisementPattern.Matching.wholeStructure),
        (.software, .afterServiceUUID), (.controller, .wholeStructure),
    ])
    func passiveModePublishesThroughAdvertisementMonitors(
        _ mode: ScenarioAdapter.AdvertisementMonitorMode, _ matching: AdvertisementPattern.Matching
    ) async throws {
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
                scenario.adapter.monitorMatching = matching
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
        // The simulator runs in the test process: no argv[0] named bluetoothd, so no version.
        #expect(log.contains("bluetoothd version unknown code=not_bluetoothd"), "\(log.suffix(3000))")
        #expect(await world.simulator.startDiscoveryCount == 0, "no discovery session: nothing scanned actively")
        let applications = await world.simulator.monitorApplications()
        #expect(applications.count == 1 && applications[0].monitors.count >= 2, "\(applications)")
        await world.shutdown()
    }

    /// The last `bluetooth` member of `bridge/health` published so far.
    func lastBluetoothHealth(_ world: SimulatedWorld) -> [String: Any]? {
        world.recorder.on("blebridge/bridge/health").last.flatMap {
            world.recorder.json($0)?["bluetooth"] as? [String: Any]
        }
    }

    /// bluetoothd restarted without `-E` takes the monitors away after the start: the gateway stays
    /// up (exiting 78 would leave it stopped once bluetoothd is fixed), says why readings stopped in
    /// `bridge/health` (`monitor_unsupported`) and in an error naming `-E`, and registers again and
    /// publishes once a bluetoothd with `-E` is back.
    @Test func bluetoothdRestartedWithoutExperimentalIsReportedAndRecovered() async throws {
        let world = try await SimulatedWorld(
            healthInterval: "1s", edit: { Self.passive(&$0) },
            world: { $0.adapter.advertisementMonitor = .software })
        #expect(await world.state("bthome", timeout: .seconds(30)) { $0["temperature"] != nil } != nil)

        try await world.simulator.restartBluez(downtime: .milliseconds(200), advertisementMonitor: .absent)
        #expect(
            await waitUntil(timeout: .seconds(20)) {
                lastBluetoothHealth(world)?["problem"] as? String == "monitor_unsupported"
            }, "health: \(String(describing: lastBluetoothHealth(world))); log: \(world.gateway.log.suffix(3000))")
        #expect(lastBluetoothHealth(world)?["available"] as? Bool == false)
        let log = world.gateway.log
        #expect(log.contains("problem=monitor_unsupported"), "\(log.suffix(3000))")
        #expect(log.contains("run bluetoothd with -E"), "\(log.suffix(3000))")
        #expect(world.gateway.process.isRunning)

        try await world.simulator.restartBluez(downtime: .milliseconds(200), advertisementMonitor: .software)
        let published = world.states("bthome").count
        #expect(
            await waitUntil(timeout: .seconds(20)) { lastBluetoothHealth(world)?["available"] as? Bool == true },
            "health: \(String(describing: lastBluetoothHealth(world))); log: \(world.gateway.log.suffix(3000))")
        #expect(await waitUntil(timeout: .seconds(20)) { world.states("bthome").count > published }, "readings resumed")
        #expect(await world.simulator.monitorApplications().count == 1)
        #expect(await world.simulator.startDiscoveryCount == 0)
        await world.shutdown()
    }

    /// bluetoothd 5.69 and 5.70 report nothing to advertisement monitors: on a bluetoothd whose
    /// `--version` says 5.70 (the simulator `exec -a`'d as `…/bluetoothd`, offering the monitor
    /// manager) the gateway stops at start with exit status 78, saying why and what to do, and
    /// registers no monitor. With 5.66 it starts without the warning about what bluetoothd 5.71
    /// and later do not report (here a `name_prefix` match), with 5.82 it starts with it.
    @Test(arguments: ["5.70", "5.66", "5.82"])
    func passiveModeFollowsBluetoothdsVersion(_ version: String) async throws {
        let bus = try await DBusDaemonFixture()
        let fake = try await FakeBluetoothd(
            busAddress: bus.address, versionOutput: version,
            scenario:
                #"{"name": "bluetoothd-\#(version)", "adapter": {"advertisement_monitor": "software"}, "devices": []}"#)
        let broker = try await MosquittoFixture()
        let gateway = try GatewayProcess(
            brokerURL: broker.url, busAddress: bus.address,
            edit: { configuration in
                Self.passive(&configuration)
                var devices = configuration["devices"] as? [[String: Any]] ?? []
                devices.append(["id": "named", "match": ["name_prefix": "Thermo"], "connection": "passive"])
                configuration["devices"] = devices
            })
        if version == "5.70" {
            let status = await gateway.process.waitForExit(timeout: .seconds(30))
            let log = gateway.log
            #expect(status == 78, "log: \(log.suffix(3000))")
            #expect(
                log.contains("bluetoothd version version=5.70 from=\"\(fake.path) --version"), "\(log.suffix(3000))")
            #expect(log.contains("bluetoothd_unsupported"), "\(log.suffix(3000))")
            #expect(log.contains("upgrade bluez to 5.71"), "\(log.suffix(3000))")
            #expect(log.contains("set bluetooth.scan.mode to \"active\""), "\(log.suffix(3000))")
            #expect(!log.contains("scanning passively through advertisement monitors"), "\(log.suffix(3000))")
        } else {
            let started = await waitUntil(timeout: .seconds(30)) {
                gateway.log.contains("scanning passively through advertisement monitors")
            }
            let log = gateway.log
            #expect(started, "log: \(log.suffix(3000))")
            #expect(log.contains("bluetoothd version version=\(version)"), "\(log.suffix(3000))")
            let warning =
                "not seen in passive scanning by bluetoothd 5.71 and later (this one is 5.82) what=\"device named"
            #expect(log.contains(warning) == (version == "5.82"), "\(log.suffix(3000))")
            #expect(!log.contains("could not be determined"), "\(log.suffix(3000))")
            gateway.process.signal(SIGTERM)
            await gateway.process.waitForExit(timeout: .seconds(15))
        }
        await fake.stop()
        await broker.stop()
        await bus.stop()
    }
}
