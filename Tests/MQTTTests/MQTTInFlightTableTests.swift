import Testing

@testable import MQTT

@Suite struct MQTTInFlightTableTests {
    @Test func acknowledgementAfterThePublisherResolvesItsWaiter() {
        var table = MQTTInFlightTable<String>()
        #expect(table.publisherArrived(mid: 7, waiter: "a") == .wait)
        #expect(table.waitingCount == 1)
        #expect(table.acknowledgementArrived(mid: 7, reasonCode: 0) == "a")
        #expect(table.waitingCount == 0)
    }

    @Test func acknowledgementBeforeThePublisherIsKeptForIt() {
        var table = MQTTInFlightTable<String>()
        #expect(table.acknowledgementArrived(mid: 3, reasonCode: 0x95) == nil)
        #expect(table.publisherArrived(mid: 3, waiter: "late") == .resolved(reasonCode: 0x95))
        #expect(table.publisherArrived(mid: 3, waiter: "next") == .wait)  // nothing stale left behind
        #expect(table.waitingCount == 1)
    }

    @Test func qos0ReportsResolveNobodyInEitherOrder() {
        var table = MQTTInFlightTable<String>()
        #expect(table.publisherArrived(mid: 1, waiter: nil) == .wait)
        #expect(table.acknowledgementArrived(mid: 1, reasonCode: 0) == nil)
        #expect(table.acknowledgementArrived(mid: 2, reasonCode: 0) == nil)
        #expect(table.publisherArrived(mid: 2, waiter: nil) == .wait)
        #expect(table.publisherArrived(mid: 1, waiter: "q1") == .wait)
        #expect(table.acknowledgementArrived(mid: 1, reasonCode: 0) == "q1")
    }

    @Test func aWrappedQoS0IdDoesNotCompleteAWaitingQoS1Publish() {
        var table = MQTTInFlightTable<String>()
        #expect(table.publisherArrived(mid: 9, waiter: "q1") == .wait)
        #expect(table.publisherArrived(mid: 9, waiter: nil) == .wait)  // id reused by a QoS 0 message
        #expect(table.acknowledgementArrived(mid: 9, reasonCode: 0) == nil)  // the QoS 0 "written" report
        #expect(table.acknowledgementArrived(mid: 9, reasonCode: 0) == "q1")  // the PUBACK
    }

    @Test func reconnectDropsQoS0ButKeepsQoS1Waiters() {
        var table = MQTTInFlightTable<String>()
        _ = table.publisherArrived(mid: 1, waiter: nil)
        _ = table.publisherArrived(mid: 2, waiter: "kept")
        table.connectionReset()
        #expect(table.acknowledgementArrived(mid: 2, reasonCode: 0) == "kept")
        // The dropped QoS 0 entry no longer absorbs a report for its id.
        #expect(table.publisherArrived(mid: 1, waiter: "new") == .wait)
        #expect(table.acknowledgementArrived(mid: 1, reasonCode: 0) == "new")
    }

    @Test func closingFailsWaitersAndRefusesNewOnes() {
        var table = MQTTInFlightTable<String>()
        _ = table.publisherArrived(mid: 1, waiter: "a")
        _ = table.publisherArrived(mid: 2, waiter: "b")
        #expect(table.close().sorted() == ["a", "b"])
        #expect(table.publisherArrived(mid: 3, waiter: "c") == .closed)
        #expect(table.cancel(mid: 3) == nil)
    }

    @Test func cancellationReturnsOnlyAWaitingPublisher() {
        var table = MQTTInFlightTable<String>()
        _ = table.publisherArrived(mid: 4, waiter: "a")
        #expect(table.cancel(mid: 4) == "a")
        #expect(table.cancel(mid: 4) == nil)
        table.connectionReset()  // the message is re-sent after a reconnect…
        #expect(table.acknowledgementArrived(mid: 4, reasonCode: 0) == nil)  // …and its PUBACK is absorbed
        #expect(table.publisherArrived(mid: 4, waiter: "reused id") == .wait)  // no stale acknowledgement
    }
}
