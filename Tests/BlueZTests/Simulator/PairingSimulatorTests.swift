import BlueZ
import BlueZSimulator
import Bluetooth
import DBus
import Foundation
import Synchronization
import TaskScope
import TestSupport
import Testing

/// Pairing and bonding (the `org.bluez.Agent1` we export, `CentralManager.pair`, pairing on insufficient
/// authentication) against the simulator's `pairing` scenario on a private dbus-daemon.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PairingSimulatorTests {
    static let lock = BluetoothAddress("C0:FF:EE:00:00:06")!  // passkey 123456
    static let sensor = BluetoothAddress("C0:FF:EE:00:00:07")!  // Just Works
    static let lockState = BluetoothUUID("6b1e1002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let temperature = BluetoothUUID(UInt16(0x2A6E))

    @Test func justWorksDevicePairsWhenAReadRaisesSecurity() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let sensor = try await bluez.connected(Self.sensor)
            let temperature = try await sensor.characteristic(Self.temperature)
            // No agent anywhere: bluetoothd raises security on the peer's refusal, the kernel pairs Just Works
            // without asking user space, and the read is sent again.
            let value = try await sensor.readValue(for: temperature)
            #expect(!value.isEmpty)
            #expect(await waitUntil(timeout: .seconds(5)) { await sensor.isPaired })
            #expect(await sensor.isBonded)
            #expect(await bluez.manager.agent.registeredCapability == nil)
            // Pairing a paired peripheral returns at once.
            try await bluez.manager.pair(sensor)
            #expect(await bluez.manager.agent.registeredCapability == nil)
        }
    }

    @Test func passkeyWrongThenRight() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let lock = try await bluez.connected(Self.lock)
            let asked = Mutex<[BluetoothAddress]>([])
            do {
                try await bluez.manager.pair(
                    lock,
                    passkeyProvider: { address in
                        asked.withLock { $0.append(address) }
                        return 111_111
                    })
                Issue.record("pairing with a wrong passkey succeeded")
            } catch let error as BluetoothError {
                #expect(error.code == .authenticationFailed)
                #expect(error.bluezError?.name == "org.bluez.Error.AuthenticationFailed")
            }
            #expect(asked.withLock { $0 } == [Self.lock])
            #expect(await bluez.manager.agent.registeredCapability == .keyboardDisplay)
            #expect(await !lock.isPaired)

            try await bluez.manager.pair(lock, passkeyProvider: { _ in 123_456 })
            #expect(await lock.isPaired)
            let state = try await lock.characteristic(Self.lockState)
            try await lock.writeValue(Data([0]), for: state, type: .withResponse)
            #expect(try await lock.readValue(for: state) == Data([0]))
        }
    }

    @Test func passkeyDeviceWithoutProviderOrDeclinedFails() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let lock = try await bluez.connected(Self.lock)
            // No provider: the agent registers NoInputNoOutput and BlueZ cannot do passkey entry.
            do {
                try await bluez.manager.pair(lock, passkeyProvider: nil)
                Issue.record("pairing without a passkey succeeded")
            } catch let error as BluetoothError {
                #expect(error.code == .authenticationFailed)
            }
            // A provider that declines: the agent answers org.bluez.Error.Rejected, BlueZ AuthenticationRejected.
            do {
                try await bluez.manager.pair(lock, passkeyProvider: { _ in nil })
                Issue.record("pairing with a declined passkey succeeded")
            } catch let error as BluetoothError {
                #expect(error.code == .authenticationFailed)
                #expect(error.bluezError?.name == "org.bluez.Error.AuthenticationRejected")
            }
            #expect(await !lock.isPaired)
            let disconnected = try await bluez.discover(Self.sensor)
            await #expect(throws: BluetoothError.Code.notConnected) {
                try await code { try await bluez.manager.pair(disconnected) }
            }
        }
    }

    /// Counts the passkeys the agent was asked for.
    final class PasskeyCounter: Sendable {
        let asked = Mutex(0)
        var count: Int { asked.withLock { $0 } }

        /// Options whose agent answers the lock's passkey, counting, and pairing on insufficient authentication.
        var options: CentralManager.Options {
            CentralManager.Options(
                pairing: PairingPolicy(passkeyProvider: { [self] _ in
                    asked.withLock { $0 += 1 }
                    return 123_456
                }), pairOnInsufficientAuthentication: true)
        }
    }

    @Test func pairsOnInsufficientAuthenticationAndRetries() async throws {
        let passkeys = PasskeyCounter()
        try await SimulatedBlueZ.run(scenario: "pairing", options: passkeys.options) { bluez in
            let lock = try await bluez.connected(Self.lock)
            let state = try await lock.characteristic(Self.lockState)
            #expect(try await lock.readValue(for: state) == Data([1]))
            #expect(await waitUntil(timeout: .seconds(5)) { await lock.isPaired })
            #expect(passkeys.count == 1)

            let sensor = try await bluez.connected(Self.sensor)
            let temperature = try await sensor.characteristic(Self.temperature)
            let values = try await sensor.notifications(for: temperature)
            #expect(await waitUntil(timeout: .seconds(5)) { await sensor.isPaired })
            #expect(try await next(1, of: values).count == 1)
            #expect(passkeys.count == 1)  // Just Works: no passkey asked
        }
    }

    @Test func concurrentOperationsPairEachDeviceOnce() async throws {
        let passkeys = PasskeyCounter()
        try await SimulatedBlueZ.run(scenario: "pairing", options: passkeys.options) { bluez in
            let lock = try await bluez.connected(Self.lock)
            let sensor = try await bluez.connected(Self.sensor)
            let state = try await lock.characteristic(Self.lockState)
            let temperature = try await sensor.characteristic(Self.temperature)
            // Two devices pairing at once (one agent registration), and two reads of one device (one pairing).
            async let first = lock.readValue(for: state)
            async let second = lock.readValue(for: state)
            async let third = sensor.readValue(for: temperature)
            let values = try await [first, second, third]
            #expect(values.allSatisfy { !$0.isEmpty })
            #expect(await waitUntil(timeout: .seconds(5)) { await lock.isPaired })
            #expect(await waitUntil(timeout: .seconds(5)) { await sensor.isPaired })
            #expect(passkeys.count == 1)
        }
    }

    @Test func agentIsRegisteredAgainWhenBluetoothdComesBack() async throws {
        let passkeys = PasskeyCounter()
        try await SimulatedBlueZ.run(scenario: "pairing", options: passkeys.options) { bluez in
            try await bluez.manager.registerAgent()
            let owner = bluez.connection.uniqueName
            #expect(await bluez.simulator.pairingAgents.defaultOwner == owner)
            try await bluez.simulator.restartBluez(downtime: .milliseconds(200))
            // No pair call: the agent registers again (as the default agent) when AgentManager1 is back.
            // Both sides are awaited: the simulator makes the first registered agent the default
            // (as src/agent.c does) before the library has had RegisterAgent's and
            // RequestDefaultAgent's replies and recorded its capability (1 in 3 runs saw that gap).
            let registered = await waitUntil(timeout: .seconds(5)) {
                let capability = await bluez.manager.agent.registeredCapability
                return await bluez.simulator.pairingAgents.defaultOwner == owner && capability == .keyboardDisplay
            }
            #expect(registered, "the agent was not registered again after the restart")
            #expect(await bluez.simulator.pairingAgents.agents[owner]?.capability == "KeyboardDisplay")
            #expect(await bluez.manager.agent.registeredCapability == .keyboardDisplay)

            // A pairing another client starts reaches it as the default agent.
            _ = try await bluez.discover(Self.lock)
            let other = try await DBusConnection(address: bluez.bus.address)
            defer { other.close() }
            _ = try await other.call(
                destination: "org.bluez", path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_06", interface: "org.bluez.Device1",
                method: "Pair", timeout: .seconds(10))
            #expect(passkeys.count == 1)
            #expect(try await bluez.simulator.snapshot(address: "C0:FF:EE:00:00:06").paired)

            // Unregistered agents stay unregistered across a restart.
            await bluez.manager.agent.unregister()
            let states = bluez.manager.stateUpdates  // replays the current .poweredOn first
            try await bluez.simulator.restartBluez(downtime: .milliseconds(100))
            #expect(try await next(3, of: states) == [.poweredOn, .resetting, .poweredOn])
            #expect(await bluez.manager.agent.registeredCapability == nil)
            #expect(await bluez.simulator.pairingAgents.agents.isEmpty)
        }
    }

    @Test func withoutTheOptionInsufficientAuthenticationIsReported() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            // The passkey lock with no agent registered: bluetoothd's security raise cannot pair.
            let lock = try await bluez.connected(Self.lock)
            let state = try await lock.characteristic(Self.lockState)
            await #expect(throws: BluetoothError.Code.insufficientAuthentication) {
                try await code { _ = try await lock.notifications(for: state) }
            }
            #expect(await !lock.isPaired)
            #expect(await bluez.manager.agent.registeredCapability == nil)
        }
    }

    @Test func pairingTimesOutWhenThePasskeyNeverComes() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let lock = try await bluez.connected(Self.lock)
            let start = ContinuousClock.now
            do {
                try await bluez.manager.pair(
                    lock,
                    policy: PairingPolicy(passkeyProvider: { _ in
                        try await Task.sleep(for: .seconds(30))
                        return nil
                    }),
                    timeout: .milliseconds(500))
                Issue.record("pairing without an answer succeeded")
            } catch let error as BluetoothError {
                #expect(error.code == .authenticationTimeout)
            }
            // Well short of the provider's 30 s: the 500 ms time-out ended the pairing (slack for a loaded CI machine).
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(await !lock.isPaired)
        }
    }

    @Test func agentAnswersWithBlueZErrorNamesAndIsUnregisteredOnClose() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let client = try await DBusConnection(address: bluez.bus.address)
            defer { client.close() }
            let displayed = Mutex<[PairingPolicy.Display]>([])
            let releaseProvider = Mutex<CheckedContinuation<Void, Never>?>(nil)
            let policy = PairingPolicy(
                passkeyProvider: { _ in
                    await withCheckedContinuation { continuation in releaseProvider.withLock { $0 = continuation } }
                    return 1
                },
                confirmation: { _, passkey in passkey == 4242 },
                display: { _, value in displayed.withLock { $0.append(value) } })
            let agent = bluez.manager.agent
            await agent.setDefaultPolicy(policy)
            try await bluez.manager.registerAgent()
            let owner = bluez.connection.uniqueName
            let device: DBusValue = .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_06")
            func call(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
                try await client.call(
                    destination: owner, path: agent.path, interface: "org.bluez.Agent1", method: method,
                    arguments: arguments, timeout: .seconds(5))
            }
            await #expect(throws: DBusError(name: "org.bluez.Error.Rejected", message: "PIN codes are not supported")) {
                _ = try await call("RequestPinCode", [device])
            }
            #expect(try await call("RequestConfirmation", [device, .uint32(4242)]).isEmpty)
            await #expect(throws: DBusError(name: "org.bluez.Error.Rejected", message: "Pairing not confirmed")) {
                _ = try await call("RequestConfirmation", [device, .uint32(1)])
            }
            await #expect(throws: DBusError(name: "org.bluez.Error.Rejected", message: "Pairing not confirmed")) {
                _ = try await call("RequestAuthorization", [device])
            }
            await #expect(throws: DBusError(name: "org.bluez.Error.Rejected", message: "Service not authorized")) {
                _ = try await call("AuthorizeService", [device, .string("0000180f-0000-1000-8000-00805f9b34fb")])
            }
            #expect(try await call("DisplayPasskey", [device, .uint32(123_456), .uint16(2)]).isEmpty)
            #expect(try await call("DisplayPinCode", [device, .string("0000")]).isEmpty)
            #expect(displayed.withLock { $0 } == [.passkey(123_456, entered: 2), .pinCode("0000")])

            // Cancel answers a pending RequestPasskey with org.bluez.Error.Canceled.
            let pending = Task { try await call("RequestPasskey", [device]) }
            let waiting = try await withDeadline(.seconds(5)) { () -> Bool? in
                while releaseProvider.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(10)) }
                return true
            }
            #expect(waiting == true)
            #expect(try await call("Cancel", []).isEmpty)
            await #expect(throws: DBusError(name: "org.bluez.Error.Canceled", message: "Canceled")) {
                _ = try await pending.value
            }
            releaseProvider.withLock { $0?.resume() }

            // Registered: a second RegisterAgent from the same client is AlreadyExists.
            await #expect(throws: BluetoothError.Code.alreadyExists) {
                try await code { try await registerAgent(bluez.connection, "/io/blebridge/other") }
            }
            await bluez.manager.close()
            #expect(await agent.registeredCapability == nil)
            // Unregistered and unexported after close.
            try await registerAgent(bluez.connection, "/io/blebridge/other")
            await #expect(throws: DBusError.self) { _ = try await call("Release", []) }
        }
    }

    /// The pairing call and the agent's answer run in the manager's scope (issue 20): `close()`
    /// cancels them and waits for them, so a provider that ignores its cancellation keeps the
    /// manager's tasks from ending (`allTasksEnded` false) until it returns.
    @Test func closeEndsAPairingInProgressAndWaitsForItsAnswer() async throws {
        try await SimulatedBlueZ.run(scenario: "pairing") { bluez in
            let lock = try await bluez.connected(Self.lock)
            let asked = Signal()
            let release = Signal()
            let pairing = Task {
                try await bluez.manager.pair(
                    lock,
                    passkeyProvider: { _ in
                        asked.fire()
                        // Ignores its cancellation: waits in a task of its own.
                        await Task.detached { await release.wait() }.value
                        return 123_456
                    },
                    timeout: .seconds(60))
            }
            await asked.wait()
            await bluez.manager.close()
            #expect(!bluez.manager.allTasksEnded, "the provider's answer is still running")
            release.fire()
            #expect(await waitUntil(timeout: .seconds(20)) { bluez.manager.allTasksEnded })
            let error = await expectThrows(BluetoothError.self) { try await pairing.value }
            #expect(error != nil)
            #expect(await !lock.isPaired)
        }
    }

    @Test func pairTimeoutMapsToAuthenticationTimeout() {
        let error = BluetoothError(bluezName: "org.freedesktop.DBus.Error.NoReply", message: "", during: .pair)
        #expect(error.code == .authenticationTimeout)
        #expect(
            BluetoothError(bluezName: "org.bluez.Error.AuthenticationCanceled", message: "").code
                == .authenticationCanceled)
        #expect(
            BluetoothError(bluezName: "org.bluez.Error.ConnectionAttemptFailed", message: "").code
                == .authenticationFailed)
        #expect(
            BluetoothError(bluezName: "org.bluez.Error.AuthenticationTimeout", message: "").code
                == .authenticationTimeout)
        #expect(
            BluetoothError(bluezName: "org.bluez.Error.AlreadyExists", message: "Already Exists").code == .alreadyExists
        )
        #expect(BluetoothError(bluezName: "org.bluez.Error.InProgress", message: "In Progress").code == .inProgress)
    }

    private func registerAgent(_ connection: DBusConnection, _ path: DBusObjectPath) async throws {
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                method: "RegisterAgent", arguments: [.objectPath(path), .string("NoInputNoOutput")])
        } catch let error as DBusError {
            throw BluetoothError(bluezName: error.name.rawValue, message: error.message)
        }
    }
}

/// Runs `body` and rethrows a `BluetoothError` as its code, so `#expect(throws: code)` can compare.
private func code(_ body: () async throws -> Void) async throws {
    do { try await body() } catch let error as BluetoothError { throw error.code }
}
