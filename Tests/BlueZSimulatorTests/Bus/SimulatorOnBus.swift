import BlueZSimulator
import TestSupport
import Testing

/// The simulator on a private dbus-daemon, for the tests that drive it from outside.
enum SimulatorOnBus {
    /// Starts a bus and the simulator with `scenario`, runs `body`, records any error it throws as a test
    /// issue, and always stops both.
    static func run(
        _ scenario: Scenario, seed: UInt64, disconnectDelay: Duration = .milliseconds(100),
        _ body: (BlueZSimulator, DBusDaemonFixture) async throws -> Void
    ) async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = BlueZSimulator(scenario: scenario, options: .init(seed: seed, disconnectDelay: disconnectDelay))
        do {
            try await simulator.start(busAddress: bus.address)
            try await body(simulator, bus)
        } catch is ExpectationFailedError {
            // A failed #require recorded its issue already.
        } catch {
            Issue.record(error)
        }
        await simulator.stop()
        await bus.stop()
    }
}
