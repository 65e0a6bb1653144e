import BlueZ
import Bluetooth
import TestSupport
import Testing
import Timekeeping

/// `CentralManager.close()` ends every task of the manager and of its peripherals (issue 20): their
/// BlueZ calls and timers are children of the manager's `TaskScope`.
@Suite(.timeLimit(.minutes(1))) struct CloseSimulatorTests {
    @Test func closeEndsEveryTaskAndFailsWhatWasWaiting() async throws {
        let clock = ManualClock()
        let options = CentralManager.Options(cacheSweepInterval: .seconds(60), clock: clock)
        try await SimulatedBlueZ.run(options: options) { bluez in
            let strap = try await bluez.connected(SimulatedBlueZ.strap)
            // A wait for a characteristic the strap does not have: its timer sleeps on the clock.
            let missing = BluetoothUUID("6b1e00ff-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
            let waiting = Task { try await strap.waitForCharacteristic(missing, timeout: .seconds(30)) }
            // The wait itself, not a count of sleepers: a connect timer cancelled a moment ago may
            // still be one (stress run, 2026-12-05: the wait started only after close()).
            try #require(await waitUntil { await strap.pendingCharacteristicWaits == 1 }, "the wait is in place")
            #expect(await waitUntil { clock.sleeperCount >= 2 }, "the sweep and the wait sleep on the clock")

            await bluez.manager.close()

            #expect(bluez.manager.allTasksEnded)
            #expect(clock.sleeperCount == 0, "a timer of the manager or the strap outlived close()")
            let error = await expectThrows(BluetoothError.self) { try await waiting.value }
            #expect(error?.code == .operationCancelled)
            #expect(await strap.state == .disconnected)
            // Nothing starts any more.
            let connect = await expectThrows(BluetoothError.self) {
                try await bluez.manager.connect(strap, timeout: .seconds(1))
            }
            #expect(connect?.code == .operationCancelled)
            let scan = await expectThrows(BluetoothError.self) { try await bluez.manager.scan() }
            #expect(scan?.code == .operationCancelled)
        }
    }
}
