import BlueZSimulator
import DBus
import Foundation
import TestSupport
import Testing

/// Issue 16: one adapter means one adapter. A second adapter (another program scanning on hci1) hears
/// the same devices as the gateway's hci0, so every device has a second object under `/org/bluez/hci1`
/// (with no methods, as the simulator's second adapter has). The gateway configured for hci0 must connect
/// through hci0's objects only, and publish each advertisement it decodes once.
@Suite(.serialized) struct TwoAdaptersEndToEndTests {
    @Test func objectsOfASecondAdapterAreIgnored() async throws {
        let world = try await SimulatedWorld(world: { scenario in
            scenario.secondAdapter = ScenarioAdapter(id: "hci1", address: "00:1A:7D:DA:71:14", name: "other")
        })
        // The second adapter has heard devices before the gateway connected them (it hears only
        // disconnected ones): their objects under hci1 exist, so the gateway had the choice.
        let client = try await DBusConnection(address: world.bus.address)
        defer { client.close() }
        let heard = await waitUntil(timeout: .seconds(10)) {
            let reply = try? await client.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects")
            return (reply?.first?.asObjectPathDictionary ?? [:]).keys.contains {
                $0.rawValue.hasPrefix("/org/bluez/hci1/dev_")
            }
        }
        #expect(heard, "the second adapter heard no device")
        #expect(try await FaultTests.resumes(world, 1501), "no readings; log: \(world.gateway.log.suffix(4000))")
        // A few seconds of both adapters hearing every advertisement.
        try await Task.sleep(for: .seconds(4))
        #expect(try await FaultTests.resumes(world, 1502), "no readings; log: \(world.gateway.log.suffix(4000))")
        let log = world.gateway.log
        #expect(!log.contains("connect failed"), "log: \(log.suffix(4000))")
        #expect(!log.contains("hci1"), "log: \(log.suffix(4000))")
        await world.shutdown()
    }
}
