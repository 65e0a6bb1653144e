import BlueZSimulator
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// bluetoothd owns `org.bluez` but does not answer `GetManagedObjects` (a VM tier run, 2026-12-05:
/// bluetoothd waited on a hung kernel task past the call's 25 s). The gateway's health said
/// `starting` for as long as that bluetoothd ran, even once it answered again: the central never
/// asked again. Now the health says `bluez_not_responding` with the error, and the central's
/// retry brings it to available by itself.
@Suite(.timeLimit(.minutes(2))) struct BLELinkLoadFailureTests {
    static let json =
        #"{"devices": [{"id": "strap", "match": {"address": "C0:FF:EE:00:00:01"}, "connection": "keep_connected", "#
        + #""subscribe": [{"characteristic": "2A37"}]}]}"#

    @Test func anUnansweredLoadIsReportedAndRecoveredFrom() async throws {
        let healths = Mutex<[BluetoothHealth]>([])
        let world = try await SimulatedLink(json: Self.json, prefix: "link-load") { gateway in
            let host = await gateway.linkHost()
            return BLELink.Host(
                report: { event, number in
                    if case .health(let health) = event { healths.withLock { $0.append(health) } }
                    await host.report(event, number)
                }, seen: host.seen, assignMatch: host.assignMatch, addAutoDevice: host.addAutoDevice,
                knownPeripherals: host.knownPeripherals, remember: host.remember)
        }
        let (link, simulator, gateway) = (world.link, world.simulator, world.gateway)
        // The first two loads fail: the central asks again after 1 s, then 2 s.
        try await simulator.failManagedObjects(count: 2)
        await link.start()
        let recovered = await waitUntil(timeout: .seconds(30)) { await gateway.bluetooth.isAvailable }
        let seen = healths.withLock { $0 }
        let problems = seen.map { $0.problem?.rawValue ?? "available" }
        #expect(recovered, "health reports: \(problems)")
        #expect(await simulator.managedObjectsCallCount >= 3)
        let unanswered = seen.first { $0.problem == .bluezNotResponding }
        #expect(unanswered != nil, "never reported bluez_not_responding: \(problems)")
        #expect(unanswered?.lastError?.hasPrefix("org.freedesktop.DBus.Error.NoReply") == true)
        #expect(unanswered?.bluezOwner != nil)
        // No problem but the unanswered loads was reported on the way (not `adapter_missing`).
        #expect(Set(problems).isSubset(of: ["starting", "bluez_not_responding", "available"]), "\(problems)")
        await world.close()
    }
}
