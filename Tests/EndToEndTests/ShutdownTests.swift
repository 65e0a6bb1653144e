import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 19, D4: SIGTERM must finish, whatever state the gateway is in. It hung (3 runs of 3)
/// after a SIGKILL and a restart on the same outbox, with the devices silent and the broker
/// connection cut: the log showed `stopping: draining in-flight work`, then reconnects forever.
@Suite(.serialized) struct ShutdownTests {
    /// How the broker connection is cut.
    enum Cut: String, CaseIterable {
        /// The broker is killed (connections reset, reconnects refused).
        case killed
        /// The broker is frozen (SIGSTOP): the TCP connection stays open, nothing is answered.
        case frozen
    }

    @Test(arguments: Cut.allCases)
    func sigtermFinishesAfterARestartWithSilentDevicesAndTheBrokerCut(_ cut: Cut) async throws {
        let world = try await SimulatedWorld()
        #expect(try await FaultTests.resumes(world, 1600), "log: \(world.gateway.log.suffix(3000))")
        world.gateway.process.signal(SIGKILL)
        await world.gateway.process.waitForExit()
        for address in await world.simulator.deviceAddresses() {
            try await world.simulator.setDeviceInRange(address: address, false)
        }
        let second = try GatewayProcess(restarting: world.gateway)
        let connected = await waitUntil(timeout: .seconds(20)) { second.log.contains("MQTT connected") }
        #expect(connected, "log: \(second.log.suffix(3000))")
        switch cut {
        case .killed: await world.broker.stop(kill: true)
        case .frozen: world.broker.pause()
        }
        _ = await waitUntil(timeout: .seconds(3)) { second.log.contains("MQTT connection lost") }
        let clock = ContinuousClock()
        let begin = clock.now
        second.process.signal(SIGTERM)
        let status = await second.process.waitForExit(timeout: .seconds(20))
        let took = clock.now - begin
        #expect(status == 0, "SIGTERM did not finish in 20 s; log: \(second.log.suffix(3000))")
        #expect(took < .seconds(10), "SIGTERM took \(took)")
        print("shutdown (\(cut.rawValue)): SIGTERM exit after \(took)")
        if status == nil { second.process.signal(SIGKILL) }
        if cut == .frozen { world.broker.resume() }
        await world.shutdown()
    }
}
