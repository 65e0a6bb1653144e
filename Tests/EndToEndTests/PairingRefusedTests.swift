import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 16: a device that refuses pairing (the simulator's `refuses_pairing`, modelled on bluetoothd 5.66
/// in the VM tier: `Failed` "Operation failed with ATT error: 0x0e" about 1 s after the security raise, and
/// the link drops). The gateway says what happened and what to do, and its reconnects back off.
@Suite(.serialized) struct PairingRefusedTests {
    /// The pairing scenario's lock, refusing every pairing, kept connected, with its passkey and `extra`
    /// (a command or a subscription).
    static func refusingLock(_ extra: [String: Any]) async throws -> SimulatedWorld {
        try await SimulatedWorld(
            scenario: "pairing",
            edit: { configuration in
                let lock: [String: Any] = [
                    "id": "lock", "name": "Lock", "match": ["address": PairingEndToEndTests.lock],
                    "connection": "keep_connected", "passkey": 123_456,
                ]
                configuration["devices"] = [lock.merging(extra) { _, new in new }]
                configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()], "rate_limit": "10/s"]
            },
            world: { scenario in
                for index in scenario.devices.indices where scenario.devices[index].id == "lock" {
                    scenario.devices[index].refusesPairing = true
                }
            })
    }

    @Test func aReadThatNeedsPairingAnswersThatTheDeviceRefusedIt() async throws {
        let world = try await Self.refusingLock([
            "commands": [
                [
                    "name": "state", "characteristic": PairingEndToEndTests.state, "operations": ["read", "write"],
                    "format": "uint8",
                ]
            ]
        ])
        try await world.recorder.subscribe("e2e/answers")
        await world.waitOnline("lock")
        let asked = ContinuousClock.now
        let answer = try await CommandPathTests.request(world, "blebridge/lock/get", #"{"state":""}"#)
        let took = ContinuousClock.now - asked
        #expect(CommandPathTests.code(answer) == "not_paired", "\(answer ?? [:])")
        let message = CommandPathTests.message(answer)
        #expect(message.contains("ATT error: 0x0e") && message.contains("refused pairing"), "\(message)")
        // The simulator's pairing_refusal_delay (1 s, bluetoothd's) plus the command's own path.
        #expect(took >= .milliseconds(900), "\(took)")
        #expect(try await !world.simulator.snapshot(address: PairingEndToEndTests.lock).paired)
        // The link dropped with the refusal; the lock is kept connected, so the gateway connects again.
        await world.waitOnline("lock")
        await world.shutdown()
    }

    /// A subscription that needs pairing fails on every connection: the gateway logs the refusal with the
    /// fix and retries on its backoff (1–5 s, doubling), not at once. Over 20 s that is at most 5
    /// attempts; a gateway retrying at once would make about 15 (1 s refusal each).
    @Test func aRefusedSubscriptionIsRetriedOnTheBackoff() async throws {
        let world = try await Self.refusingLock([
            "subscribe": [["characteristic": PairingEndToEndTests.state, "mode": "notify"]]
        ])
        func failures() -> Int {
            world.gateway.log.components(separatedBy: "connect failed").count - 1
        }
        #expect(
            await waitUntil(timeout: .seconds(30)) { failures() >= 1 },
            "no failed connect; log: \(world.gateway.log.suffix(3000))")
        let first = failures()
        // An observation window, not a wait for an event: how many attempts the backoff lets through.
        await sleepRunnable(for: .seconds(20))
        let attempts = failures() - first
        print("PairingRefusedTests: \(attempts) more failed connects in 20 s after the first")
        #expect(attempts >= 1, "never retried; log: \(world.gateway.log.suffix(3000))")
        #expect(attempts <= 5, "\(attempts) attempts in 20 s; log: \(world.gateway.log.suffix(3000))")
        #expect(world.gateway.log.contains("refused pairing"), "log: \(world.gateway.log.suffix(3000))")
        #expect(try await !world.simulator.snapshot(address: PairingEndToEndTests.lock).paired)
        await world.shutdown()
    }
}
