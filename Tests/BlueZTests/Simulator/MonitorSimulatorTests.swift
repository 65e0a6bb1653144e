import BlueZ
import BlueZSimulator
import Bluetooth
import DBus
import TestSupport
import Testing

/// Passive scanning through advertisement monitors against the simulator's
/// `org.bluez.AdvertisementMonitorManager1` on a private dbus-daemon.
@Suite(.serialized, .timeLimit(.minutes(1))) struct MonitorSimulatorTests {
    static let bthome = BluetoothAddress("C0:FF:EE:00:00:03")!
    static let bthomePattern = AdvertisementPattern(adType: 0x16, content: [0xD2, 0xFC])!

    @Test(arguments: [ScenarioAdapter.AdvertisementMonitorMode.software, .controller])
    func monitorsReportMatchingAdvertisersWithoutADiscoverySession(
        _ mode: ScenarioAdapter.AdvertisementMonitorMode
    ) async throws {
        try await SimulatedBlueZ.run(advertisementMonitor: mode) { bluez in
            let stream = try await bluez.manager.startMonitoring([[Self.bthomePattern]], allowDuplicates: true)
            let applications = await bluez.simulator.monitorApplications()
            #expect(applications.map(\.root) == ["/io/blebridge/monitor"])
            #expect(applications.first?.monitors == ["/io/blebridge/monitor/monitor0"])
            let reports = await withDeadline(.seconds(10)) { () -> [Discovery]? in
                var reports: [Discovery] = []
                for await discovery in stream {
                    reports.append(discovery)
                    // Two different BTHome readings: the value generator changes between advertisements.
                    if Set(reports.compactMap { $0.advertisementData.serviceData[BluetoothUUID(UInt16(0xFCD2))] })
                        .count >= 2
                    {
                        return reports
                    }
                }
                return reports
            }
            let seen = try #require(reports)
            #expect(Set(seen.map(\.identifier)) == [Self.bthome], "only what the pattern matches")
            #expect(await bluez.simulator.startDiscoveryCount == 0)
            #expect(await !bluez.manager.isScanning)
            await bluez.manager.stopMonitoring()
            #expect(await bluez.simulator.monitorApplications().isEmpty, "UnregisterMonitor")
        }
    }

    /// bluetoothd forgets every registration when it restarts; the central registers again once
    /// the manager is back, and reports resume.
    @Test func monitorsAreRegisteredAgainAfterABluetoothdRestart() async throws {
        try await SimulatedBlueZ.run(advertisementMonitor: .software) { bluez in
            let stream = try await bluez.manager.startMonitoring([[Self.bthomePattern]], allowDuplicates: true)
            let first = await withDeadline(.seconds(10)) { () -> BluetoothAddress? in
                for await discovery in stream { return discovery.identifier }
                return nil
            }
            #expect(first == Self.bthome)
            try await bluez.simulator.restartBluez(downtime: .milliseconds(200))
            let restarted = ContinuousClock.now
            // Reports from before the restart may still be buffered: only later ones count.
            let resumed = await withDeadline(.seconds(10)) { () -> BluetoothAddress? in
                for await discovery in stream where discovery.timestamp > restarted { return discovery.identifier }
                return nil
            }
            #expect(resumed == Self.bthome, "registered again, reports resumed")
            #expect(await bluez.simulator.monitorApplications().count == 1)
            #expect(await bluez.simulator.startDiscoveryCount == 0)
        }
    }

    /// A `DeviceFound` handled before the `PropertiesChanged` bluetoothd sent just before it (the
    /// central's signal stream and its exported methods take different paths) must not report
    /// the device's older copy: here left by an earlier monitoring session while the sensor's value
    /// moved on (the VM tier measured a copy 20 s old published as the first reading).
    @Test func theFirstReportIsTheAdvertisementNotAnOlderCopy() async throws {
        try await SimulatedBlueZ.run(advertisementMonitor: .software) { bluez in
            await bluez.simulator.setDeviceFoundFirst(true)
            let uuid = BluetoothUUID(UInt16(0xFCD2))
            let earlier = try await bluez.manager.startMonitoring([[Self.bthomePattern]], allowDuplicates: true)
            let heard = await withDeadline(.seconds(10)) { () -> Bool in
                for await discovery in earlier where discovery.identifier == Self.bthome { return true }
                return false
            }
            #expect(heard == true)
            await bluez.manager.stopMonitoring()
            // Real delay: the sensor's next value comes due (its update interval, 2 s) while nothing
            // listens, so bluetoothd's copy is older than what the sensor advertises next; read after
            // it, the central's copy has every signal of the earlier session.
            try await Task.sleep(for: .milliseconds(2_500))
            let peripheral = try #require(await bluez.manager.retrievePeripherals(withIdentifiers: [Self.bthome]).first)
            let cached = try #require(await peripheral.advertisementData.serviceData[uuid])
            let stream = try await bluez.manager.startMonitoring([[Self.bthomePattern]], allowDuplicates: true)
            let first = await withDeadline(.seconds(10)) { () -> [UInt8]? in
                for await discovery in stream where discovery.identifier == Self.bthome {
                    return discovery.advertisementData.serviceData[uuid]
                }
                return nil
            }
            let reported = try #require(first ?? nil)
            #expect(reported != cached, "the first report is bluetoothd's older copy \(Hex.string(cached))")
        }
    }

    /// bluetoothd sends a device's `PropertiesChanged`, then calls `DeviceFound` (the simulator
    /// too); the central handles the call in a task of its own, so it could report the advertisement
    /// before the one that matched (the VM tier's run 9: 21.5 °C reported while 21.6 was on air).
    /// One advertisement at a time, each a new value: once the device is followed, each gives two
    /// reports of that value (its property change, and `DeviceFound` with duplicates allowed). A
    /// `DeviceFound` handled before the property change reports the previous value instead, and the
    /// second report of the new one never comes.
    @Test func everyReportOfAnAdvertisementIsThatAdvertisement() async throws {
        try await SimulatedBlueZ.run(
            advertisementMonitor: .software, advertisingInterval: .seconds(3600), advertisementUpdateInterval: .zero
        ) { bluez in
            let uuid = BluetoothUUID(UInt16(0xFCD2))
            let simulator = bluez.simulator
            let stream = try await bluez.manager.startMonitoring([[Self.bthomePattern]], allowDuplicates: true)
            let others = await withDeadline(.seconds(30)) { () -> [Int] in
                var reports = stream.filter { $0.identifier == Self.bthome }.makeAsyncIterator()
                func advertise() async -> [UInt8] {
                    await simulator.advertiseOnce()
                    return await simulator.advertisedServiceData(of: Self.bthome)[uuid] ?? []
                }
                // The first `DeviceFound` only starts following the device; a report says it does.
                _ = await advertise()
                let second = await advertise()
                while let report = await reports.next() {
                    if report.advertisementData.serviceData[uuid] == second { break }
                }
                // Per advertisement, the reports of other values read before its two (a report of
                // the warm-up still queued).
                var others: [Int] = []
                for _ in 0..<12 {
                    let current = await advertise()
                    var matching = 0
                    var other = 0
                    while matching < 2, let report = await reports.next() {
                        if report.advertisementData.serviceData[uuid] == current { matching += 1 } else { other += 1 }
                    }
                    others.append(other)
                }
                return others
            }
            #expect(others != nil, "an advertisement's DeviceFound reported another value")
        }
    }

    @Test func withoutTheManagerMonitoringIsRefused() async throws {
        try await SimulatedBlueZ.run { bluez in
            #expect(await bluez.manager.advertisementMonitorSupport() == .noManager)
            await #expect(throws: BluetoothError.self) {
                _ = try await bluez.manager.startMonitoring([[Self.bthomePattern]])
            }
            #expect(await bluez.simulator.monitorApplications().isEmpty)
        }
    }

    /// The manager's errors and Release for content bluetoothd refuses, on a raw connection.
    @Test func registrationErrorsAndReleaseOfAnInvalidMonitor() async throws {
        try await SimulatedBlueZ.run(advertisementMonitor: .software) { bluez in
            #expect(await bluez.manager.advertisementMonitorSupport() == .orPatterns(features: []))
            let client = try await DBusConnection(address: bluez.bus.address)
            defer { client.close() }
            let (calls, continuation) = AsyncStream.makeStream(of: String.self)
            func recorder(_ name: String) -> DBusMethod {
                DBusMethod(name: name, inSignature: name.hasPrefix("Device") ? "o" : "") { call in
                    continuation.yield("\(name) \(call.path.rawValue)")
                    return []
                }
            }
            let root: DBusObjectPath = "/test/app"
            try await client.addObjectManager(at: root)
            let methods = ["Release", "Activate", "DeviceFound", "DeviceLost"].map(recorder)
            func monitor(_ patterns: [DBusValue]) -> DBusInterface {
                DBusInterface(
                    name: "org.bluez.AdvertisementMonitor1", methods: methods,
                    properties: [
                        DBusProperty(name: "Type", signature: "s", get: { .string("or_patterns") }),
                        DBusProperty(
                            name: "Patterns", signature: "a(yyay)",
                            get: { .array(elementSignature: "(yyay)", patterns) }),
                    ])
            }
            try await client.export(
                path: "/test/app/good",
                interfaces: [monitor([.structure([.byte(0), .byte(0x16), .bytes([0xD2, 0xFC])])])])
            try await client.export(
                path: "/test/app/bad", interfaces: [monitor([.structure([.byte(0), .byte(0x16), .bytes([])])])])
            func manager(_ method: String, _ path: DBusObjectPath) async throws {
                _ = try await client.call(
                    destination: "org.bluez", path: "/org/bluez/hci0",
                    interface: "org.bluez.AdvertisementMonitorManager1",
                    method: method, arguments: [.objectPath(path)])
            }
            try await manager("RegisterMonitor", root)
            await #expect(throws: DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists")) {
                try await manager("RegisterMonitor", root)
            }
            await #expect(throws: DBusError(name: "org.bluez.Error.DoesNotExist", message: "Does Not Exist")) {
                try await manager("UnregisterMonitor", "/test/other")
            }
            let first = await withDeadline(.seconds(10)) { () -> [String]? in
                var received: [String] = []
                for await call in calls {
                    received.append(call)
                    if received.contains("Activate /test/app/good"),
                        received.contains(where: { $0.hasPrefix("DeviceFound") })
                    {
                        return received
                    }
                }
                return received
            }
            let seen = try #require(first)
            #expect(seen.contains("Release /test/app/bad"))
            #expect(!seen.contains("Activate /test/app/bad"))
            #expect(seen.contains("DeviceFound /test/app/good"))
            try await manager("UnregisterMonitor", root)
            let released = await withDeadline(.seconds(5)) { () -> Bool? in
                for await call in calls where call == "Release /test/app/good" { return true }
                return false
            }
            #expect(released == true)
        }
    }
}
