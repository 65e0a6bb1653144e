import BlueZ
import BlueZSimulator
import Bluetooth
import Foundation
import TestSupport
import Testing

/// The simulator's stale GATT cache (`makeGATTCacheStale`) and the cure the library offers
/// (`CentralManager.forget`), on a private dbus-daemon.
@Suite(.serialized, .timeLimit(.minutes(1))) struct StaleGATTCacheSimulatorTests {
    static let strap = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let heartRate = BluetoothUUID(UInt16(0x180D))

    @Test func staleCacheSurvivesReconnectsUntilTheDeviceIsForgotten() async throws {
        try await SimulatedBlueZ.run { bluez in
            let strap = try await bluez.connected(Self.strap)
            #expect(try await strap.discoverServices([Self.heartRate]).count == 1)

            try await bluez.simulator.makeGATTCacheStale(address: Self.strap.string, service: "180d")
            await bluez.manager.disconnect(strap)
            try await bluez.manager.connect(strap, timeout: .seconds(30))
            // DB Hash match: discovery skipped, the cached copy lacks the service (GetManagedObjects agrees).
            #expect(try await strap.discoverServices([Self.heartRate]).isEmpty)
            #expect(try await !strap.discoverServices().isEmpty)

            try await bluez.manager.forget(strap)
            #expect(try await !bluez.simulator.snapshot(address: Self.strap.string).present)
            let fresh = try await bluez.connected(Self.strap)
            #expect(try await fresh.discoverServices([Self.heartRate]).count == 1)
        }
    }

    /// `RemoveDevice` takes the device's objects off the bus one at a time, and the simulator's actor
    /// suspends at each: an advertisement handled in between found the device gone and exported it
    /// again, and the rest of the removal then took the new object away (or the export failed on the
    /// object still there). The simulator believed the device exported, the bus had no object, and no
    /// `InterfacesAdded` came again: the gateway never saw the device after its removal
    /// (`StaleGATTCacheTests.aReportOfTheDeviceBeingRemoved…` under load, issue 20). bluetoothd
    /// removes a device in one step: an advertisement after it makes a new object.
    @Test func aDeviceRemovedWhileItAdvertisesIsOnTheBusWhenTheSimulatorSaysSo() async throws {
        try await SimulatedBlueZ.run { bluez in
            // Discovery stays on for the whole test (the stream is held), so every advertisement counts.
            let scan = try await bluez.manager.scan()
            let found = await withDeadline(.seconds(10)) {
                for await discovery in scan where discovery.identifier == Self.strap { return discovery.peripheral }
                return nil
            }
            let strap = try #require(found, "strap not discovered")
            for round in 1...5 {
                #expect(try await bluez.simulator.snapshot(address: Self.strap.string).present, "round \(round)")
                // Advertisements keep arriving while the removal runs, as from a device in range.
                let advertising = Task {
                    for _ in 0..<40 { await bluez.simulator.advertiseOnce() }
                }
                try await bluez.manager.forget(strap)
                await advertising.value
                await bluez.simulator.advertiseOnce()
                let present = try await bluez.simulator.snapshot(address: Self.strap.string).present
                let reply = try await bluez.connection.call(
                    destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager",
                    method: "GetManagedObjects")
                let objects = reply.first?.asObjectPathDictionary ?? [:]
                let onBus = objects.keys.contains { $0.rawValue.hasSuffix(Self.strap.bluezPathComponent) }
                #expect(present, "round \(round): advertised after the removal, so found again")
                #expect(onBus == present, "round \(round): simulator says present \(present), bus has it \(onBus)")
                guard onBus == present else { return }
            }
            withExtendedLifetime(scan) {}
        }
    }

    @Test func staleCacheNeedsACachedDatabase() async throws {
        try await SimulatedBlueZ.run { bluez in
            await #expect(throws: SimulatorError.self) {
                try await bluez.simulator.makeGATTCacheStale(address: Self.strap.string, service: "180d")
            }
        }
    }
}
