import BlueZ
import Bluetooth
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// A device gets one connect attempt at a time. Two attempts subscribed to the same peripheral and
/// the second's listener replaced the first's without ending it: every notification became two
/// readings until the link dropped (the soak's duplicated readings, 2026-12-05: 2,350, each one
/// published twice by the gateway, from 7 devices after a bluetoothd restart).
@Suite(.timeLimit(.minutes(2))) struct BLELinkConnectOnceTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let json =
        #"{"devices": [{"id": "strap", "match": {"address": "\#(strap)"}, "connection": "keep_connected", "#
        + #""subscribe": [{"characteristic": "heart_rate_measurement"}]}]}"#

    @Test func aSecondConnectWhileOneRunsDoesNotSubscribeTwice() async throws {
        let events = Mutex<[BLELink.Event]>([])
        let world = try await SimulatedLink(json: Self.json, prefix: "connect-once") { _ in
            BLELink.Host(
                report: { event, _ in events.withLock { $0.append(event) } },
                seen: { _, _, _, _ in true }, assignMatch: { _, template in template },
                addAutoDevice: { _, _, _ in nil }, knownPeripherals: { [] }, remember: { _ in })
        }
        let link = world.link
        await link.start()
        #expect(await waitUntil(timeout: .seconds(30)) { await link.peripherals["strap"] != nil }, "strap not seen")

        // The pool asks again while the first attempt runs (as after a power cycle set it idle).
        await link.connect("strap")
        await link.connect("strap")
        let connected = await waitUntil(timeout: .seconds(30)) {
            events.withLock { $0.contains { if case .connected("strap", _) = $0 { true } else { false } } }
        }
        #expect(connected, "not connected: \(events.withLock { $0 })")
        #expect(await waitUntil(timeout: .seconds(10)) { await link.connectTasks.isEmpty })
        let peripheral = try #require(await link.peripherals["strap"])
        let measurement = try #require(
            try await link.gatt["strap"]?.find(CharacteristicTarget(BluetoothUUID(UInt16(0x2A37)))).characteristic)
        #expect(await peripheral.notificationListenerCount(measurement) == 1)
        #expect(events.withLock { $0.filter { if case .connected = $0 { true } else { false } }.count } == 1)

        await world.close()
    }
}
