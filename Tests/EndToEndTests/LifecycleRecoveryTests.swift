import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 16's goal against the simulator, for the gateway as a whole: readings resume within 10 s of the
/// adapter or bluetoothd being back, after an adapter power cycle (device unbonded and bonded) and a
/// bluetoothd restart (SIGTERM and SIGKILL). The VM tier asserts the same against real bluetoothd (docs/testing.md).
@Suite(.serialized) struct LifecycleRecoveryTests {
    static let bound = Duration.seconds(10)

    /// The demo world with only the strap.
    static func strapWorld() async throws -> SimulatedWorld {
        try await SimulatedWorld(edit: strapOnly)
    }

    /// The gateway's configuration edited down to the strap (raw GATT commands off).
    static func strapOnly(_ configuration: inout [String: Any]) {
        configuration["devices"] = (configuration["devices"] as? [[String: Any]])?.filter {
            $0["id"] as? String == "hr_strap"
        }
        configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()], "rate_limit": "10/s"]
    }

    /// How long until an injected heart rate reaches MQTT again (nil: not within 30 s).
    static func strapResumes(_ world: SimulatedWorld, _ bpm: UInt16) async throws -> Duration? {
        let start = ContinuousClock.now
        return try await FaultTests.resumes(world, bpm) ? ContinuousClock.now - start : nil
    }

    @Test func unbondedPowerCycle() async throws {
        let world = try await Self.strapWorld()
        #expect(try await FaultTests.resumes(world, 1401), "never subscribed; log: \(world.gateway.log.suffix(3000))")
        await world.simulator.setPowered(false)
        // The adapter stays off for a while, as in the VM tier (3 s there).
        try await Task.sleep(for: .seconds(1))
        await world.simulator.setPowered(true)
        let took = try await Self.strapResumes(world, 1402)
        print("LifecycleRecoveryTests: unbonded power cycle: readings \(String(describing: took)) after power-on")
        #expect(
            took.map { $0 <= Self.bound } ?? false,
            "\(String(describing: took)); log: \(world.gateway.log.suffix(4000))")
        await world.shutdown()
    }

    /// bluetoothd stopped by SIGTERM (it powers off and removes its objects first) and by SIGKILL (its name
    /// just vanishes), then started again.
    @Test(arguments: BluezStop.allCases) func bluetoothdRestart(_ stop: BluezStop) async throws {
        let world = try await Self.strapWorld()
        #expect(try await FaultTests.resumes(world, 1411), "never subscribed; log: \(world.gateway.log.suffix(3000))")
        // Returns once org.bluez is back.
        try await world.simulator.restartBluez(downtime: .seconds(1), stop: stop)
        let took = try await Self.strapResumes(world, 1412)
        print(
            "LifecycleRecoveryTests: bluetoothd restart (SIG\(stop.rawValue)): readings \(String(describing: took)) "
                + "after it was back")
        #expect(
            took.map { $0 <= Self.bound } ?? false,
            "\(String(describing: took)); log: \(world.gateway.log.suffix(4000))")
        await world.shutdown()
    }

    @Test func bondedPowerCycle() async throws {
        let lock = PairingEndToEndTests.lock
        let world = try await PairingEndToEndTests.subscribedWorld()
        #expect(try await Self.lockResumes(world) != nil, "no notification; log: \(world.gateway.log.suffix(3000))")

        await world.simulator.setPowered(false)
        try await Task.sleep(for: .seconds(1))
        await world.simulator.setPowered(true)
        let took = try await Self.lockResumes(world)
        print("LifecycleRecoveryTests: bonded power cycle: readings \(String(describing: took)) after power-on")
        #expect(
            took.map { $0 <= Self.bound } ?? false,
            "\(String(describing: took)); log: \(world.gateway.log.suffix(4000))")
        #expect(try await world.simulator.snapshot(address: lock).paired)
        await world.shutdown()
    }

    /// How long until a state notification of the lock (alternating 0 and 1, injected every half second)
    /// reaches MQTT (nil: not within 30 s).
    static func lockResumes(_ world: SimulatedWorld) async throws -> Duration? {
        let start = ContinuousClock.now
        var value: UInt8 = 0
        while ContinuousClock.now - start < .seconds(30) {
            let before = world.recorder.on("blebridge/lock").count
            value ^= 1
            try? await world.simulator.setCharacteristicValue(
                address: PairingEndToEndTests.lock, uuid: PairingEndToEndTests.state, value: [value], notify: true)
            let arrived = await world.recorder.wait(timeout: .milliseconds(500)) { messages in
                messages.filter { $0.topic == "blebridge/lock" }.count > before
            }
            if arrived { return ContinuousClock.now - start }
        }
        return nil
    }
}
