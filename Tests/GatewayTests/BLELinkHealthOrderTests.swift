import BlueZSimulator
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// The gateway handles ``BLELink``'s events in the order the link decided them. Two of the link's
/// tasks decide a health (the central's state stream and the monitor manager's), and each report
/// leaves the link's thread through Swift's pool on its way to the gateway, so one task's report
/// could be overtaken by the other's. A stress run saw it (2026-12-05): after bluetoothd restarted
/// without `-E`, `adapter_missing` (decided before the adapter was back) reached the gateway after
/// `monitor_unsupported`, and `bridge/health` stayed at it.
@Suite(.timeLimit(.minutes(2))) struct BLELinkHealthOrderTests {
    static let json =
        #"{"bluetooth": {"scan": {"mode": "passive"}}, "devices": [{"id": "bthome", "#
        + #""match": {"address": "C0:FF:EE:00:00:03"}, "connection": "passive", "#
        + #""advertisement": {"decoder": "bthome"}}]}"#

    /// What the host was given (in the order it passed it on), and the link once it exists.
    final class Recorder: Sendable {
        let healths = Mutex<[BluetoothHealth]>([])
        let link = Mutex<BLELink?>(nil)
        /// The first report of a problem in `held` waits (as a slow hop through the pool would)
        /// until the link's own health has moved on, or 10 s.
        let held = Mutex<Set<BluetoothHealth.Problem>>([])
        /// Reports waiting now, and held so far.
        let holding = Mutex(0)
        let heldCount = Mutex(0)
    }

    /// The link's reports of the state after bluetoothd went away are held on their way to the
    /// gateway until the link has decided a later health (as a report's hop through a busy pool
    /// can be): the gateway still ends on the link's health.
    @Test func aReportHeldOnItsWayIsNotOvertakenByALaterOne() async throws {
        var scenario = try Scenario.load("demo")
        scenario.adapter.advertisementMonitor = .software
        let recorder = Recorder()
        let world = try await SimulatedLink(json: Self.json, prefix: "link-health", scenario: scenario) { gateway in
            Self.host(recorder, passingTo: await gateway.linkHost())
        }
        let (link, simulator, gateway) = (world.link, world.simulator, world.gateway)
        recorder.link.withLock { $0 = link }
        await link.start()
        let refusal = await link.startPassiveScan()
        #expect(refusal == nil, "\(String(describing: refusal))")
        #expect(await waitUntil(timeout: .seconds(20)) { await gateway.bluetooth.isAvailable })

        recorder.held.withLock { $0 = [.bluezNotRunning, .adapterMissing] }
        try await simulator.restartBluez(downtime: .milliseconds(200), advertisementMonitor: .absent)
        let settled = await waitUntil(timeout: .seconds(20)) { await link.health.problem == .monitorUnsupported }
        let linkHealth = await link.health
        #expect(settled, "the link's health: \(linkHealth)")
        // Each held report is let go once the link's health has moved on (within 10 s): the
        // gateway's health must then be the link's. Handled out of order, it stays an older one.
        let agreed = await waitUntil(timeout: .seconds(20)) {
            let health = await link.health
            let reached = await gateway.bluetooth
            return recorder.holding.withLock { $0 == 0 } && reached == health
        }
        let (linkProblem, gatewayProblem) = await (link.health.problem, gateway.bluetooth.problem)
        let order = recorder.healths.withLock { $0.map { $0.problem?.rawValue ?? "available" } }
        let problems = (linkProblem?.rawValue ?? "available", gatewayProblem?.rawValue ?? "available")
        #expect(agreed, "the link's: \(problems.0), the gateway's: \(problems.1); passed on in order: \(order)")
        #expect(recorder.heldCount.withLock { $0 } > 0, "no report was held: the test did not test the order")

        await world.close()
    }

    /// A host passing every event on to `gateway` (the gateway's own host), recording the health;
    /// a report of a held problem waits first.
    static func host(_ recorder: Recorder, passingTo gateway: BLELink.Host) -> BLELink.Host {
        BLELink.Host(
            report: { event, number in
                if case .health(let health) = event {
                    // Only the first: holding both tasks' reports would leave no task to move on.
                    let hold = recorder.held.withLock { held -> Bool in
                        guard let problem = health.problem, held.contains(problem) else { return false }
                        held.removeAll()
                        return true
                    }
                    if hold, let link = recorder.link.withLock({ $0 }) {
                        recorder.holding.withLock { $0 += 1 }
                        recorder.heldCount.withLock { $0 += 1 }
                        _ = await waitUntil(timeout: .seconds(10)) { await link.health != health }
                        recorder.holding.withLock { $0 -= 1 }
                    }
                    recorder.healths.withLock { $0.append(health) }
                }
                await gateway.report(event, number)
            }, seen: gateway.seen, assignMatch: gateway.assignMatch, addAutoDevice: gateway.addAutoDevice,
            knownPeripherals: gateway.knownPeripherals, remember: gateway.remember)
    }
}
