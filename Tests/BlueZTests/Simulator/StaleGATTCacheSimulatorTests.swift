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

    @Test func staleCacheNeedsACachedDatabase() async throws {
        try await SimulatedBlueZ.run { bluez in
            await #expect(throws: SimulatorError.self) {
                try await bluez.simulator.makeGATTCacheStale(address: Self.strap.string, service: "180d")
            }
        }
    }
}
