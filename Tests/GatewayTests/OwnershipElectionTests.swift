import Gateway
import Testing

/// ``OwnershipElection`` without I/O: instants are made by hand from one origin.
@Suite struct OwnershipElectionTests {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    func candidacy(
        _ id: String, _ rssi: Double, slots: Int = 3, holding: Bool = false, at seconds: Double
    ) -> OwnershipElection.Event {
        .candidacy(.init(gatewayID: id, rssi: rssi, freeSlots: slots, holding: holding, at: at(seconds)))
    }

    @Test func aGatewayThatHearsTheDeviceAloneOwnsItAndConnects() {
        var election = OwnershipElection(me: "gw-a")
        let actions = election.handle(candidacy("gw-a", -70, at: 0), at: at(0))
        #expect(election.owner == "gw-a")
        #expect(election.role == .holder)
        #expect(actions == [.ownerChanged(from: nil, to: "gw-a"), .connect])
        // Renewing the same candidacy changes nothing.
        #expect(election.handle(candidacy("gw-a", -71, holding: true, at: 1), at: at(1)).isEmpty)
    }

    @Test func tiesGoToTheSmallerGatewayIDOnEveryGateway() {
        var onA = OwnershipElection(me: "gw-a")
        var onB = OwnershipElection(me: "gw-b")
        // Same RSSI, same free slots, heard in opposite orders.
        _ = onA.handle(candidacy("gw-b", -60, at: 0), at: at(0))
        _ = onA.handle(candidacy("gw-a", -60, at: 0), at: at(0))
        _ = onB.handle(candidacy("gw-a", -60, at: 0), at: at(0))
        _ = onB.handle(candidacy("gw-b", -60, at: 0), at: at(0))
        #expect(onA.owner == "gw-a")
        #expect(onB.owner == "gw-a")
        #expect(onA.role == .holder)
        #expect(onB.role == .standby)
        // Equal RSSI: more free slots wins before the id.
        var election = OwnershipElection(me: "gw-a")
        _ = election.handle(candidacy("gw-a", -60, slots: 1, at: 0), at: at(0))
        _ = election.handle(candidacy("gw-b", -60, slots: 4, at: 0), at: at(0))
        #expect(election.owner == "gw-b")
    }

    @Test func flappingRSSIDoesNotMoveTheDevice() {
        var election = OwnershipElection(me: "gw-a")
        _ = election.handle(candidacy("gw-a", -70, at: 0), at: at(0))
        #expect(election.owner == "gw-a")
        var changes = 0
        // gw-b swings between 10 dB better and 10 dB worse every 4 s (shorter than the 10 s switch delay).
        for step in 1...30 {
            let time = Double(step * 4)
            let rssi: Double = step.isMultiple(of: 2) ? -80 : -60
            let actions =
                election.handle(candidacy("gw-a", -70, holding: true, at: time), at: at(time))
                + election.handle(candidacy("gw-b", rssi, at: time), at: at(time))
            changes += actions.filter { if case .ownerChanged = $0 { true } else { false } }.count
        }
        #expect(changes == 0)
        #expect(election.owner == "gw-a")
        // A lead inside the margin never moves it, however long it lasts.
        for step in 31...40 {
            let time = Double(step * 4)
            _ = election.handle(candidacy("gw-a", -70, holding: true, at: time), at: at(time))
            _ = election.handle(candidacy("gw-b", -65, at: time), at: at(time))
        }
        #expect(election.owner == "gw-a")
    }

    @Test func aSteadyLeadMovesTheDeviceAfterTheSwitchDelayReleaseFirst() {
        var onA = OwnershipElection(me: "gw-a")
        var onB = OwnershipElection(me: "gw-b")
        func both(_ event: OwnershipElection.Event, _ time: Double) -> (
            a: [OwnershipElection.Action], b: [OwnershipElection.Action]
        ) {
            (onA.handle(event, at: at(time)), onB.handle(event, at: at(time)))
        }
        _ = both(candidacy("gw-a", -75, at: 0), 0)
        _ = both(candidacy("gw-a", -75, holding: true, at: 1), 1)
        _ = both(candidacy("gw-b", -60, at: 2), 2)
        #expect(onA.owner == "gw-a")
        #expect(onA.nextCheck == at(12))
        // Before the delay: no change.
        _ = both(.tick, 11.9)
        #expect(onA.owner == "gw-a")
        let atDelay = both(.tick, 12)
        #expect(onA.owner == "gw-b")
        #expect(onB.owner == "gw-b")
        #expect(atDelay.a == [.ownerChanged(from: "gw-a", to: "gw-b"), .release])
        // gw-b waits until gw-a says it let go.
        #expect(onB.role == .waiting(for: "gw-a"))
        #expect(!atDelay.b.contains(.connect))
        let released = both(candidacy("gw-a", -75, holding: false, at: 13), 13)
        #expect(released.b == [.connect])
        #expect(onB.role == .holder)
        #expect(onA.role == .standby)
    }

    @Test func theOwnersLastWillMovesTheDeviceAtOnceToTheBestStandby() {
        var election = OwnershipElection(me: "gw-c")
        _ = election.handle(candidacy("gw-a", -50, holding: true, at: 0), at: at(0))
        _ = election.handle(candidacy("gw-b", -80, at: 0), at: at(0))
        _ = election.handle(candidacy("gw-c", -65, at: 0), at: at(0))
        #expect(election.owner == "gw-a")
        #expect(election.role == .standby)
        let actions = election.handle(.gatewayOffline("gw-a"), at: at(1))
        #expect(election.owner == "gw-c")
        #expect(actions == [.ownerChanged(from: "gw-a", to: "gw-c"), .connect])
    }

    @Test func theOwnerLosingTheDeviceOrGoingSilentHandsItOver() {
        var election = OwnershipElection(me: "gw-b")
        _ = election.handle(candidacy("gw-a", -50, holding: true, at: 0), at: at(0))
        _ = election.handle(candidacy("gw-b", -80, at: 0), at: at(0))
        // Withdrawn after silence_timeout.
        #expect(election.handle(.withdrawn("gw-a"), at: at(5)) == [.ownerChanged(from: "gw-a", to: "gw-b"), .connect])
        // A holder whose candidacy is not renewed goes stale after the lifetime (30 s).
        var stale = OwnershipElection(me: "gw-b")
        _ = stale.handle(candidacy("gw-a", -50, holding: true, at: 0), at: at(0))
        _ = stale.handle(candidacy("gw-b", -80, at: 20), at: at(20))
        #expect(stale.owner == "gw-a")
        #expect(stale.nextCheck == at(30))
        #expect(stale.handle(.tick, at: at(30)) == [.ownerChanged(from: "gw-a", to: "gw-b"), .connect])
    }

    @Test func aGatewayWithoutAFreeSlotIsPassedOver() {
        var election = OwnershipElection(me: "gw-a")
        _ = election.handle(candidacy("gw-a", -40, slots: 0, at: 0), at: at(0))
        #expect(election.owner == nil)
        #expect(election.role == .standby)
        _ = election.handle(candidacy("gw-b", -85, slots: 2, at: 0), at: at(0))
        #expect(election.owner == "gw-b")
        // A holder needs no free slot: its own connection uses one.
        var holder = OwnershipElection(me: "gw-a")
        _ = holder.handle(candidacy("gw-a", -40, slots: 0, holding: true, at: 0), at: at(0))
        _ = holder.handle(candidacy("gw-b", -85, slots: 2, at: 0), at: at(0))
        #expect(holder.owner == "gw-a")
        #expect(holder.role == .holder)
    }

    @Test func aFreshGatewayTakesTheHolderAsOwnerSoEveryoneAgrees() {
        // gw-c starts while gw-a holds the device with a weaker signal than gw-b's.
        var election = OwnershipElection(me: "gw-c")
        _ = election.handle(candidacy("gw-b", -62, at: 0), at: at(0))
        _ = election.handle(candidacy("gw-a", -64, holding: true, at: 0), at: at(0))
        #expect(election.owner == "gw-a")
    }
}
