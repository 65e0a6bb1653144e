import Gateway
import Testing

/// ``ConnectionScheduler`` in shared-broker mode (`coordinated`): a device is connected only
/// while this gateway owns it.
@Suite struct ConnectionSchedulerOwnershipTests {
    typealias Scheduler = ConnectionScheduler
    let start = ContinuousClock.now
    static let backoff: @Sendable (Int) -> Duration = { attempt in .seconds(min(60, 1 << min(attempt - 1, 6))) }

    @Test func aCoordinatedDeviceStandsByUntilOwnedAndIsReleasedWhenNoLonger() {
        var scheduler = Scheduler(
            coordinated: true, devices: [.init(id: "strap", mode: .keepConnected)], now: start, backoff: Self.backoff)
        // Heard, but not owned: no connection attempt, no deadline to wake for.
        #expect(scheduler.handle(.discovered("strap"), at: start) == [])
        #expect(scheduler.nextDeadline() == nil)
        #expect(scheduler.handle(.owned("strap", true), at: start) == [.connect("strap")])
        #expect(scheduler.handle(.connected("strap"), at: start) == [])
        // Another gateway owns it now: disconnect, and no reconnect after the disconnect.
        #expect(scheduler.handle(.owned("strap", false), at: start) == [.disconnect("strap", .released)])
        #expect(scheduler.handle(.disconnected("strap"), at: start) == [])
        #expect(scheduler.nextDeadline() == nil)
        // Owned again (a failover back): connected at once, no backoff.
        #expect(scheduler.handle(.owned("strap", true), at: start + .seconds(1)) == [.connect("strap")])
    }

    @Test func releasedWhileConnectingItIsDisconnectedWhenTheConnectEnds() {
        var scheduler = Scheduler(
            coordinated: true, devices: [.init(id: "strap", mode: .keepConnected)], now: start, backoff: Self.backoff)
        _ = scheduler.handle(.discovered("strap"), at: start)
        #expect(scheduler.handle(.owned("strap", true), at: start) == [.connect("strap")])
        #expect(scheduler.handle(.owned("strap", false), at: start) == [])
        #expect(scheduler.handle(.connected("strap"), at: start) == [.disconnect("strap", .released)])
        #expect(scheduler.handle(.disconnected("strap"), at: start) == [])
    }

    @Test func queuedCommandsFailWhenTheDeviceIsReleasedAndOnDemandPollsWaitForOwnership() {
        var scheduler = Scheduler(
            coordinated: true,
            devices: [
                .init(id: "lamp", mode: .keepConnected),
                .init(id: "scale", mode: .onDemand, pollInterval: .seconds(60)),
            ], now: start, backoff: Self.backoff)
        _ = scheduler.handle(.discovered("lamp"), at: start)
        // A poll due on a device this gateway does not own: nothing.
        #expect(scheduler.handle(.discovered("scale"), at: start) == [])
        // The owner-to-be queues a command while the holder releases: it waits, unconnected.
        #expect(scheduler.handle(.owned("lamp", true), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [])
        #expect(scheduler.handle(.owned("lamp", false), at: start) == [.failCommands("lamp")])
        #expect(scheduler.handle(.connected("lamp"), at: start) == [.disconnect("lamp", .released)])
        #expect(scheduler.handle(.owned("scale", true), at: start) == [.connect("scale")])
    }

    @Test func withoutCoordinationOwnershipEventsChangeNothing() {
        var scheduler = Scheduler(
            devices: [.init(id: "strap", mode: .keepConnected)], now: start, backoff: Self.backoff)
        #expect(scheduler.handle(.discovered("strap"), at: start) == [.connect("strap")])
        #expect(scheduler.handle(.connected("strap"), at: start) == [])
        #expect(scheduler.handle(.owned("strap", false), at: start) == [])
        #expect(scheduler.isConnected("strap"))
    }
}
