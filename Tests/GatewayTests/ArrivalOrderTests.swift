import TestSupport
import Testing

@testable import Gateway

/// ``ArrivalOrder`` lets numbered events go in their numbers' order, whatever order they arrive in,
/// and the gateway starts the link's events that way (``Gateway/linkEvent(_:number:)``).
@Suite struct ArrivalOrderTests {
    /// Arriving 3, 1, 4, 2: 1 goes at once, then 2, which hands over to 3, which hands over to 4.
    @Test func eachWaitsForTheLowerNumbersAndIsHandedOverInTurn() {
        var order = ArrivalOrder<String>()
        #expect(!order.isTurn(3))
        order.park(3, "three")
        #expect(order.isTurn(1))
        #expect(order.went(1) == nil, "2 has not arrived")
        #expect(!order.isTurn(4))
        order.park(4, "four")
        #expect(order.waiting == 2)
        #expect(order.isTurn(2))
        #expect(order.went(2) == "three")
        #expect(order.went(3) == "four")
        #expect(order.went(4) == nil)
        #expect(order.waiting == 0)
        #expect(order.isTurn(5))
    }

    /// The gateway's side: the link's events numbered 2 and 3 arrive before 1; their handling
    /// starts 1, 2, 3 (the adapter's power last said off, as the link decided), while an event
    /// without a number (the intake's `heard`) goes at once.
    @Test func theGatewayStartsTheLinksEventsInTheirOrder() async throws {
        let directory = try TemporaryDirectory(prefix: "arrival-order")
        let gateway = try await unstartedGateway(in: directory)
        let host = await gateway.linkHost()
        let late = BluetoothHealth(adapter: "hci0", lastError: "gone", problem: .adapterMissing)
        let early = BluetoothHealth(adapter: "hci0", problem: .bluezNotRunning)
        let third = Task { await host.report(.health(late), 3) }
        let second = Task { await host.report(.adapterPowered(false), 2) }
        #expect(await waitUntil { await gateway.linkEventOrder.waiting == 2 })
        #expect(await gateway.bluetooth != late, "3 went before 1")
        await host.report(.heard("nobody", rssi: -70, readings: []), nil)
        await host.report(.health(early), 1)
        await second.value
        await third.value
        #expect(await gateway.bluetooth == late, "the last health the link decided")
        #expect(await gateway.linkEventOrder.waiting == 0)
        await gateway.stop()
    }
}
