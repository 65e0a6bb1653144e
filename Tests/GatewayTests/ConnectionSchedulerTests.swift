import Gateway
import Testing

@Suite struct ConnectionSchedulerTests {
    typealias Scheduler = ConnectionScheduler
    let start = ContinuousClock.now
    static let backoff: @Sendable (Int) -> Duration = { attempt in .seconds(min(60, 1 << min(attempt - 1, 6))) }

    func discoverAll(_ scheduler: inout Scheduler, _ ids: [String]) -> [Scheduler.Action] {
        ids.flatMap { scheduler.handle(.discovered($0), at: start) }
    }

    @Test func connectsOneAtATimeUpToTheLimit() {
        let devices = (0..<4).map { Scheduler.DeviceSpec(id: "k\($0)", mode: .keepConnected) }
        var scheduler = Scheduler(maxConnections: 3, devices: devices, now: start, backoff: Self.backoff)
        let first = discoverAll(&scheduler, devices.map(\.id))
        #expect(first == [.connect("k0")])
        #expect(scheduler.handle(.connected("k0"), at: start) == [.connect("k1")])
        #expect(scheduler.handle(.connected("k1"), at: start) == [.connect("k2")])
        #expect(scheduler.handle(.connected("k2"), at: start) == [])
        #expect(scheduler.slotsInUse == 3)
        // A lost connection frees a slot; the waiting device takes it, the lost one backs off.
        #expect(scheduler.handle(.disconnected("k1"), at: start) == [.connect("k3")])
        #expect(scheduler.handle(.connected("k3"), at: start) == [])
        #expect(scheduler.handle(.disconnected("k3"), at: start + .milliseconds(10)) == [])
        let deadline = scheduler.nextDeadline()
        #expect(deadline == start + .seconds(1))
        #expect(scheduler.handle(.tick, at: start + .seconds(1)) == [.connect("k1")])
    }

    @Test func undiscoveredAndPassiveDevicesAreNeverConnected() {
        let devices = [
            Scheduler.DeviceSpec(id: "p", mode: .passive), Scheduler.DeviceSpec(id: "k", mode: .keepConnected),
        ]
        var scheduler = Scheduler(devices: devices, now: start, backoff: Self.backoff)
        #expect(scheduler.handle(.tick, at: start) == [])
        #expect(scheduler.handle(.discovered("p"), at: start) == [])
        #expect(scheduler.handle(.discovered("k"), at: start) == [.connect("k")])
    }

    @Test func failedConnectsBackOffAndResetAfterSuccess() {
        var scheduler = Scheduler(devices: [.init(id: "k", mode: .keepConnected)], now: start, backoff: Self.backoff)
        #expect(scheduler.handle(.discovered("k"), at: start) == [.connect("k")])
        #expect(scheduler.handle(.connectFailed("k"), at: start) == [])
        #expect(scheduler.handle(.tick, at: start + .milliseconds(999)) == [])
        #expect(scheduler.handle(.tick, at: start + .seconds(1)) == [.connect("k")])
        #expect(scheduler.handle(.connectFailed("k"), at: start + .seconds(1)) == [])
        #expect(scheduler.nextDeadline() == start + .seconds(3))
        #expect(scheduler.handle(.tick, at: start + .seconds(3)) == [.connect("k")])
        #expect(scheduler.handle(.connected("k"), at: start + .seconds(3)) == [])
        #expect(scheduler.handle(.disconnected("k"), at: start + .seconds(4)) == [])
        #expect(scheduler.handle(.tick, at: start + .seconds(5)) == [.connect("k")])
    }

    /// A retry that comes due while it cannot be acted on (the adapter off, the device unseen, another
    /// device connecting) is no deadline: the event that unblocks it plans again. Returned, it made
    /// the gateway's wake-up timer fire at once, over and over, as long as the block lasted.
    @Test func aBlockedRetryIsNoDeadline() {
        let devices = [Scheduler.DeviceSpec(id: "a", mode: .keepConnected), .init(id: "b", mode: .keepConnected)]
        var scheduler = Scheduler(devices: devices, now: start, backoff: Self.backoff)
        #expect(discoverAll(&scheduler, ["a", "b"]) == [.connect("a")])
        #expect(scheduler.handle(.connectFailed("a"), at: start) == [.connect("b")])
        #expect(scheduler.nextDeadline() == start + .seconds(1))
        // b is still connecting when a's retry comes due: nothing to do until b's attempt ends.
        #expect(scheduler.handle(.tick, at: start + .seconds(1)) == [])
        #expect(scheduler.nextDeadline() == nil)
        #expect(scheduler.handle(.connected("b"), at: start + .seconds(2)) == [.connect("a")])
        // The adapter goes away with a's retry pending; it comes due while the adapter is off.
        #expect(scheduler.handle(.connectFailed("a"), at: start + .seconds(2)) == [])
        #expect(scheduler.handle(.adapterPowered(false), at: start + .seconds(2)) == [])
        #expect(scheduler.handle(.tick, at: start + .seconds(10)) == [])
        #expect(scheduler.nextDeadline() == nil)
        #expect(scheduler.handle(.adapterPowered(true), at: start + .seconds(11)) == [.connect("a")])
    }

    /// BlueZ lost the device's object (a bluetoothd restart): no backoff, connected as soon as it is seen again.
    @Test func aDeviceBlueZNoLongerKnowsWaitsForItsNextSightingWithoutBackoff() {
        var scheduler = Scheduler(devices: [.init(id: "k", mode: .keepConnected)], now: start, backoff: Self.backoff)
        #expect(scheduler.handle(.discovered("k"), at: start) == [.connect("k")])
        #expect(scheduler.handle(.unseen("k"), at: start) == [])
        #expect(scheduler.nextDeadline() == nil)
        #expect(scheduler.handle(.tick, at: start + .seconds(10)) == [])
        #expect(scheduler.handle(.discovered("k"), at: start + .seconds(10)) == [.connect("k")])
    }

    @Test func commandsComeFirstAndFailAfterRepeatedConnectFailures() {
        let devices = [
            Scheduler.DeviceSpec(id: "k", mode: .keepConnected),
            Scheduler.DeviceSpec(id: "lamp", mode: .onDemand),
        ]
        var scheduler = Scheduler(maxConnections: 2, devices: devices, now: start, backoff: Self.backoff)
        _ = scheduler.handle(.discovered("lamp"), at: start)
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.discovered("k"), at: start) == [])
        #expect(scheduler.handle(.connected("lamp"), at: start) == [.runCommands("lamp"), .connect("k")])
        #expect(scheduler.handle(.commandsFinished("lamp"), at: start) == [.disconnect("lamp", .idle)])
        #expect(scheduler.handle(.disconnected("lamp"), at: start) == [])
        #expect(scheduler.handle(.connected("k"), at: start) == [])
        // Now the lamp is out of range: three failed attempts fail the command.
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.connectFailed("lamp"), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.connectFailed("lamp"), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.connectFailed("lamp"), at: start) == [.failCommands("lamp")])
    }

    @Test func commandsQueuedWhileABatchRunsRunNext() {
        var scheduler = Scheduler(devices: [.init(id: "lamp", mode: .keepConnected)], now: start, backoff: Self.backoff)
        #expect(scheduler.handle(.discovered("lamp"), at: start) == [.connect("lamp")])
        #expect(scheduler.handle(.connected("lamp"), at: start) == [])
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [.runCommands("lamp")])
        // Two more arrive while the first batch runs: they wait for it, then run (were stranded).
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [])
        #expect(scheduler.handle(.commandQueued("lamp"), at: start) == [])
        #expect(scheduler.handle(.commandsFinished("lamp"), at: start) == [.runCommands("lamp")])
        #expect(scheduler.handle(.commandsFinished("lamp"), at: start) == [])
    }

    @Test func silentDevicesAreReconnectedByTheWatchdog() {
        var scheduler = Scheduler(
            devices: [.init(id: "hr", mode: .keepConnected, silenceTimeout: .seconds(30))], now: start,
            backoff: Self.backoff)
        _ = scheduler.handle(.discovered("hr"), at: start)
        _ = scheduler.handle(.connected("hr"), at: start)
        #expect(scheduler.handle(.activity("hr"), at: start + .seconds(20)) == [])
        // Activity never plans (hot path): even a due watchdog waits for the next tick.
        #expect(scheduler.handle(.activity("other"), at: start + .seconds(20)) == [])
        #expect(scheduler.nextDeadline() == start + .seconds(50))
        #expect(scheduler.handle(.tick, at: start + .seconds(50)) == [])
        #expect(scheduler.handle(.tick, at: start + .seconds(51)) == [.disconnect("hr", .silent)])
        // An expected disconnect is not penalised: reconnect at once.
        #expect(scheduler.handle(.disconnected("hr"), at: start + .seconds(51)) == [.connect("hr")])
    }

    @Test func discoveryPausesWhileConnecting() {
        var scheduler = Scheduler(
            pauseDiscoveryWhileConnecting: true, devices: [.init(id: "k", mode: .keepConnected)], now: start,
            backoff: Self.backoff)
        #expect(scheduler.handle(.discovered("k"), at: start) == [.pauseDiscovery, .connect("k")])
        #expect(scheduler.handle(.connected("k"), at: start) == [.resumeDiscovery])
    }

    @Test func adapterPowerCycleDropsAndRestoresConnections() {
        var scheduler = Scheduler(devices: [.init(id: "k", mode: .keepConnected)], now: start, backoff: Self.backoff)
        _ = scheduler.handle(.discovered("k"), at: start)
        _ = scheduler.handle(.connected("k"), at: start)
        #expect(scheduler.handle(.adapterPowered(false), at: start) == [])
        #expect(scheduler.slotsInUse == 0)
        #expect(scheduler.handle(.disconnected("k"), at: start) == [])
        #expect(scheduler.handle(.adapterPowered(true), at: start) == [.connect("k")])
    }

    @Test func adapterBackClearsTheBackoffEarnedWhileItWasAway() {
        var scheduler = Scheduler(devices: [.init(id: "k", mode: .keepConnected)], now: start, backoff: Self.backoff)
        _ = scheduler.handle(.discovered("k"), at: start)
        _ = scheduler.handle(.connected("k"), at: start)
        // bluetoothd goes away: the link drops first, then connects fail until the adapter is gone.
        #expect(scheduler.handle(.disconnected("k"), at: start) == [])
        #expect(scheduler.handle(.tick, at: start + .seconds(1)) == [.connect("k")])
        #expect(scheduler.handle(.connectFailed("k"), at: start + .seconds(1)) == [])
        #expect(scheduler.nextDeadline() == start + .seconds(3))
        #expect(scheduler.handle(.adapterPowered(false), at: start + .seconds(2)) == [])
        // Back half a second later: connect at once, not at the backoff's deadline.
        let back = start + .milliseconds(2500)
        #expect(scheduler.handle(.adapterPowered(true), at: back) == [.connect("k")])
        // The next failure starts the backoff from its first step again.
        #expect(scheduler.handle(.connectFailed("k"), at: back) == [])
        #expect(scheduler.nextDeadline() == back + .seconds(1))
    }

    @Test func reconfigureDropsRemovedDevicesOnlyAndKeepsOthersConnected() {
        let devices = [Scheduler.DeviceSpec(id: "a", mode: .keepConnected), .init(id: "b", mode: .keepConnected)]
        var scheduler = Scheduler(devices: devices, now: start, backoff: Self.backoff)
        _ = discoverAll(&scheduler, ["a", "b"])
        _ = scheduler.handle(.connected("a"), at: start)
        _ = scheduler.handle(.connected("b"), at: start)
        let actions = scheduler.handle(
            .reconfigure([.init(id: "a", mode: .keepConnected), .init(id: "c", mode: .keepConnected)]), at: start)
        #expect(actions == [.disconnect("b", .removed)])
        #expect(scheduler.isConnected("a"))
        #expect(scheduler.handle(.discovered("c"), at: start) == [.connect("c")])
    }

    /// 50 on-demand devices polled every 60 s through 5 slots, alongside 4 keep-connected ones:
    /// every device is polled in every interval; the limits are never exceeded.
    @Test func fiftyDevicesRotateThroughFiveSlots() {
        let keep = (0..<4).map { Scheduler.DeviceSpec(id: "keep\($0)", mode: .keepConnected) }
        let polled = (0..<50).map { Scheduler.DeviceSpec(id: "poll\($0)", mode: .onDemand, pollInterval: .seconds(60)) }
        var scheduler = Scheduler(maxConnections: 5, devices: keep + polled, now: start, backoff: Self.backoff)
        var now = start
        var queue: [Scheduler.Action] = discoverAll(&scheduler, (keep + polled).map(\.id))
        var polls: [String: [ContinuousClock.Instant]] = [:]
        var maxInUse = 0
        let end = start + .seconds(180)
        while now < end {
            while !queue.isEmpty {
                let action = queue.removeFirst()
                now = now + .milliseconds(50)  // every BLE operation takes time
                var next: [Scheduler.Action] = []
                switch action {
                case .connect(let id): next = scheduler.handle(.connected(id), at: now)
                case .poll(let id):
                    polls[id, default: []].append(now)
                    next = scheduler.handle(.pollFinished(id), at: now)
                case .disconnect(let id, _): next = scheduler.handle(.disconnected(id), at: now)
                default: break
                }
                maxInUse = max(maxInUse, scheduler.slotsInUse)
                #expect(scheduler.slotsInUse <= 5)
                queue += next
            }
            guard let deadline = scheduler.nextDeadline() else { break }
            now = max(now, deadline)
            queue += scheduler.handle(.tick, at: now)
        }
        #expect(maxInUse == 5)
        #expect(scheduler.connectedDevices.filter { $0.hasPrefix("keep") }.count == 4)
        for spec in polled {
            let times = polls[spec.id] ?? []
            #expect(times.count >= 3, "\(spec.id) polled \(times.count) times")
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier < .seconds(70), "\(spec.id) waited \(later - earlier)")
            }
        }
    }
}
