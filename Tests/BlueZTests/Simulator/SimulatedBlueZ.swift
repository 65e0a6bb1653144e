import BlueZ
import BlueZSimulator
import Bluetooth
import DBus
import TestSupport
import Testing

/// A private dbus-daemon with the BlueZ simulator on it (fast timing) and a `CentralManager` connected to it.
struct SimulatedBlueZ {
    let bus: DBusDaemonFixture
    let simulator: BlueZSimulator
    let connection: DBusConnection
    let manager: CentralManager

    static let heartRateService = BluetoothUUID(UInt16(0x180D))
    static let heartRateMeasurement = BluetoothUUID(UInt16(0x2A37))
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))
    static let lampPower = BluetoothUUID("6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let strap = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let lamp = BluetoothAddress("C0:FF:EE:00:00:05")!

    static func start(
        scenario: String = "demo", options: CentralManager.Options = CentralManager.Options(),
        staleTimeout: Duration = .seconds(30), secondAdapter: ScenarioAdapter? = nil,
        advertisementMonitor: ScenarioAdapter.AdvertisementMonitorMode = .absent, advertisingInterval: Duration? = nil,
        advertisementUpdateInterval: Duration? = nil, edit: (inout Scenario) -> Void = { _ in },
        beforeCentral: (BlueZSimulator) async throws -> Void = { _ in }
    ) async throws -> SimulatedBlueZ {
        let bus = try await DBusDaemonFixture()
        var world = try Scenario.load(scenario).accelerated(
            advertisementUpdateInterval: advertisementUpdateInterval, staleTimeout: staleTimeout)
        if let advertisingInterval { world.timing.advertisingInterval = advertisingInterval }
        world.secondAdapter = secondAdapter
        world.adapter.advertisementMonitor = advertisementMonitor
        edit(&world)
        let simulator = BlueZSimulator(
            scenario: world,
            options: .init(seed: 5, disconnectDelay: .milliseconds(50)))
        try await simulator.start(busAddress: bus.address)
        try await beforeCentral(simulator)
        let connection = try await DBusConnection(address: bus.address)
        let manager = try await CentralManager(connection: connection, options: options)
        return SimulatedBlueZ(bus: bus, simulator: simulator, connection: connection, manager: manager)
    }

    /// Starts a private bus, the simulator and a central, runs `body`, records any error it
    /// throws as a test issue, and always tears everything down.
    static func run(
        scenario: String = "demo", options: CentralManager.Options = CentralManager.Options(),
        staleTimeout: Duration = .seconds(30), secondAdapter: ScenarioAdapter? = nil,
        advertisementMonitor: ScenarioAdapter.AdvertisementMonitorMode = .absent, advertisingInterval: Duration? = nil,
        advertisementUpdateInterval: Duration? = nil, edit: (inout Scenario) -> Void = { _ in },
        beforeCentral: (BlueZSimulator) async throws -> Void = { _ in },
        _ body: (SimulatedBlueZ) async throws -> Void
    ) async throws {
        let bluez = try await start(
            scenario: scenario, options: options, staleTimeout: staleTimeout, secondAdapter: secondAdapter,
            advertisementMonitor: advertisementMonitor, advertisingInterval: advertisingInterval,
            advertisementUpdateInterval: advertisementUpdateInterval, edit: edit, beforeCentral: beforeCentral)
        do {
            try await body(bluez)
        } catch is ExpectationFailedError {
            // A failed #require recorded its issue already.
        } catch {
            Issue.record(error)
        }
        await bluez.stop()
    }

    func stop() async {
        await manager.close()
        connection.close()
        await simulator.stop()
        await bus.stop()
    }

    /// Scans until `address` shows up, then stops scanning.
    func discover(_ address: BluetoothAddress, timeout: Duration = .seconds(10)) async throws -> Peripheral {
        let stream = try await manager.scan()
        let found = await withDeadline(timeout) {
            for await discovery in stream where discovery.identifier == address { return discovery.peripheral }
            return nil
        }
        return try #require(found, "\(address) not discovered")
    }

    /// Discovers and connects. The connect time-out is generous: it is wall time, and a full
    /// parallel run once needed more than 10 s to connect and resolve services (0.3 s alone).
    func connected(_ address: BluetoothAddress) async throws -> Peripheral {
        let peripheral = try await discover(address)
        try await manager.connect(peripheral, timeout: .seconds(30))
        return peripheral
    }
}

/// Collects the next `count` elements of a state stream within `timeout`.
func next<S: AsyncSequence & Sendable>(_ count: Int, of sequence: S, timeout: Duration = .seconds(10)) async throws
    -> [S.Element] where S.Element: Sendable
{
    try await withDeadline(timeout) {
        var collected: [S.Element] = []
        for try await element in sequence {
            collected.append(element)
            if collected.count == count { break }
        }
        return collected
    } ?? []
}
