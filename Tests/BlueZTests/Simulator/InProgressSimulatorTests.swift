import BlueZ
import BlueZSimulator
import Bluetooth
import DBus
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

/// bluetoothd answers `InProgress` to a write request on a characteristic that has one under way, from any
/// client (`characteristic_write_value`, 5.66). A `Peripheral` repeats the call after a pause; a link that
/// drops during the pause must fail the operation at once, as it fails every operation BlueZ has not
/// answered yet.
@Suite(.serialized, .timeLimit(.minutes(1))) struct InProgressSimulatorTests {
    static let lock = BluetoothAddress("C0:FF:EE:00:00:06")!  // passkey 123456
    static let lockState = BluetoothUUID("6b1e1002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!

    /// A passkey answer held until the test gives it: a pairing, and the write that raised it, stay under way.
    final class HeldPasskey: Sendable {
        let asked = Mutex(0)
        let answers = AsyncStream.makeStream(of: UInt32?.self)

        func provide() async -> UInt32? {
            asked.withLock { $0 += 1 }
            for await answer in answers.stream { return answer }
            return nil
        }
    }

    @Test func aWriteInBackOffAfterInProgressFailsAtOnceWhenTheLinkDrops() async throws {
        let clock = ManualClock()
        let held = HeldPasskey()
        let options = CentralManager.Options(
            pairing: PairingPolicy(passkeyProvider: { _ in await held.provide() }), clock: clock)
        try await SimulatedBlueZ.run(scenario: "pairing", options: options) { bluez in
            defer { held.answers.continuation.finish() }
            try await bluez.manager.registerAgent()
            let lock = try await bluez.connected(Self.lock)
            let state = try await lock.characteristic(Self.lockState)
            let path = try DBusObjectPath(state.id.rawValue)
            // Another client's write request raises security: bluetoothd asks the agent (held), and the
            // write stays under way.
            let other = try await DBusConnection(address: bluez.bus.address)
            defer { other.close() }
            let write: @Sendable () async throws -> Void = {
                _ = try await other.call(
                    destination: "org.bluez", path: path, interface: "org.bluez.GattCharacteristic1",
                    method: "WriteValue", arguments: [.bytes([0]), .properties(["type": .string("request")])],
                    timeout: .seconds(30))
            }
            let underWay = Task { try? await write() }
            defer { underWay.cancel() }
            #expect(await waitUntil(timeout: .seconds(10)) { held.asked.withLock { $0 } == 1 })
            // The simulator answers a second write request as bluetoothd does.
            do {
                try await write()
                Issue.record("a second write request while one is under way was not refused")
            } catch let error as DBusError {
                #expect(error.name.rawValue == "org.bluez.Error.InProgress")
                #expect(error.message == "In Progress")
            }
            // The peripheral's write gets InProgress too and waits to try again (the clock stands still).
            let sleepers = clock.sleeperCount
            let ours = Task { try await lock.writeValue(Data([0]), for: state, type: .withResponse) }
            let inBackOff = await withDeadline(.seconds(10)) {
                await clock.sleeping(atLeast: sleepers + 1)
                return true
            }
            try #require(inBackOff == true, "the peripheral's write did not back off after InProgress")
            // The peer goes away during the pause.
            try await bluez.simulator.disconnect(address: Self.lock.description)
            // (Awaiting the task's result cannot be cut short: it is watched instead.)
            let outcome = Mutex<Result<Void, any Error>?>(nil)
            let watcher = Task { outcome.withLock { [result = await ours.result] in $0 = result } }
            if await !waitUntil(timeout: .seconds(10), { outcome.withLock { $0 != nil } }) {
                Issue.record("the write was still waiting 10 s after the link dropped")
                clock.advance(by: .seconds(1))  // its pause ends, so the test does
            }
            await watcher.value
            switch outcome.withLock({ $0 }) {
            case .failure(let error)?:
                #expect((error as? BluetoothError)?.code == .peripheralDisconnected, "\(error)")
            case .success?, nil:
                Issue.record("the write succeeded on a dropped link")
            }
            held.answers.continuation.yield(nil)
        }
    }
}
