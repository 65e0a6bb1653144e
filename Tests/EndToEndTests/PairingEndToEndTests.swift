import Foundation
import TestSupport
import Testing

/// Issue 16: a device that refuses a read until paired makes bluetoothd pair through the default agent.
/// The gateway is that agent when a device has a `passkey`: the read succeeds with the right passkey, and a
/// wrong one gives bluetoothd's `NotPermitted` "Not paired" as the command error `not_paired`.
@Suite(.serialized) struct PairingEndToEndTests {
    static let lock = "C0:FF:EE:00:00:06"
    static let state = "6b1e1002-3c4d-4e5f-8a9b-0c1d2e3f4a5b"

    /// Only the pairing scenario's lock (passkey 123456), with a `state` read/write command.
    static func world(passkey: Int?) async throws -> SimulatedWorld {
        let world = try await SimulatedWorld(scenario: "pairing") { configuration in
            var lock: [String: Any] = [
                "id": "lock", "name": "Lock", "match": ["address": lock], "connection": "keep_connected",
                "commands": [
                    ["name": "state", "characteristic": state, "operations": ["read", "write"], "format": "uint8"]
                ],
            ]
            lock["passkey"] = passkey
            configuration["devices"] = [lock]
            configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()], "rate_limit": "10/s"]
        }
        try await world.recorder.subscribe("e2e/answers")
        await world.waitOnline("lock")
        return world
    }

    /// Only the lock, kept connected with its `state` subscribed (passkey 123456): the subscription needs
    /// pairing, so bluetoothd pairs through the gateway's agent and the lock is bonded once online.
    static func subscribedWorld() async throws -> SimulatedWorld {
        let world = try await SimulatedWorld(scenario: "pairing") { configuration in
            configuration["devices"] = [
                [
                    "id": "lock", "name": "Lock", "match": ["address": lock], "connection": "keep_connected",
                    "passkey": 123_456, "subscribe": [["characteristic": state, "mode": "notify"]],
                ]
            ]
            configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()], "rate_limit": "10/s"]
        }
        await world.waitOnline("lock")
        #expect(try await world.simulator.snapshot(address: lock).paired)
        return world
    }

    @Test func theConfiguredPasskeyPairsWhenAReadNeedsIt() async throws {
        let world = try await Self.world(passkey: 123_456)
        let answer = try await CommandPathTests.request(world, "blebridge/lock/get", #"{"state":""}"#)
        #expect(CommandPathTests.code(answer) == "ok", "\(CommandPathTests.message(answer))")
        #expect((answer?["data"] as? [String: Any])?["state"] as? Int == 1, "\(answer ?? [:])")
        #expect(try await world.simulator.snapshot(address: Self.lock).paired)
        #expect(world.gateway.log.contains("pairing agent registered"), "log: \(world.gateway.log.suffix(2000))")
        await world.shutdown()
    }

    /// The agent was registered only at start: a passkey added by SIGHUP stayed unused (`not_paired`)
    /// until a restart.
    @Test func aPasskeyAddedByAReloadPairs() async throws {
        let world = try await Self.world(passkey: nil)
        #expect(!world.gateway.log.contains("pairing agent registered"))
        try world.gateway.rewrite { configuration in
            var devices = configuration["devices"] as? [[String: Any]] ?? []
            devices[0]["passkey"] = 123_456
            configuration["devices"] = devices
        }
        world.gateway.process.signal(SIGHUP)
        let registered = await waitUntil(timeout: .seconds(20)) {
            world.gateway.log.contains("pairing agent registered")
        }
        #expect(registered, "log: \(world.gateway.log.suffix(2000))")
        await world.waitOnline("lock")
        let answer = try await CommandPathTests.request(world, "blebridge/lock/get", #"{"state":""}"#)
        #expect(CommandPathTests.code(answer) == "ok", "\(answer ?? [:])")
        #expect(try await world.simulator.snapshot(address: Self.lock).paired)
        await world.shutdown()
    }

    @Test func aWrongPasskeyIsReportedAsNotPaired() async throws {
        let world = try await Self.world(passkey: 111_111)
        let answer = try await CommandPathTests.request(world, "blebridge/lock/get", #"{"state":""}"#)
        #expect(CommandPathTests.code(answer) == "not_paired", "\(answer ?? [:])")
        let message = CommandPathTests.message(answer)
        #expect(message.contains("Not paired") && message.contains("passkey"), "\(message)")
        #expect(try await !world.simulator.snapshot(address: Self.lock).paired)
        await world.shutdown()
    }
}
