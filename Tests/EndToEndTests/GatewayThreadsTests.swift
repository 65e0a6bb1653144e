import Foundation
import TestSupport
import Testing

/// The gateway's Swift tasks run on its own fixed pool of threads (`TaskPool`), not on
/// libdispatch's default-priority pool, which adds a worker whenever one sleeps at its
/// once-a-second look while work is queued (docs/testing.md, "The ninth thread").
@Suite struct GatewayThreadsTests {
    @Test func theGatewaysTasksRunOnItsOwnPoolNotOnLibdispatchs() async throws {
        let world = try await SimulatedWorld()
        let pid = world.gateway.process.processIdentifier
        // Devices connected and publishing: tasks and timers (Task.sleep, Clock.sleep) have run.
        await world.waitOnline("thermometer")
        #expect(await world.state("thermometer") != nil, "log: \(world.gateway.log.suffix(3000))")
        let names = ThreadNames.of("\(pid)")
        let cores = max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect(names["blebridge.pool"] == cores, "\(names)")
        #expect(names["blebridge.timer"] == 1, "\(names)")
        // SignalHub's (comm keeps 15 bytes of a name).
        #expect(names["blebridge.signa"] == 1, "\(names)")
        // libdispatch's default-priority workers (comm: the tail of com.apple.root.default-qos).
        #expect(names["oot.default-qos", default: 0] == 0, "\(names)")
        await world.shutdown()
    }
}
