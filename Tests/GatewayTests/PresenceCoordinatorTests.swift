import Configuration
import Foundation
import Gateway
import Testing

/// Room presence without I/O (docs/multi-gateway.md, "Room presence"): ``SmoothedRSSI``,
/// the distance, ``RoomElection`` and ``PresenceCoordinator`` on instants made by hand.
@Suite struct PresenceCoordinatorTests {
    let t0 = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int((seconds * 1000).rounded())) }

    @Test func theSmoothedRSSIFollowsAStepWithItsTimeConstantWhateverTheSampleRate() {
        for interval in [0.1, 0.5, 1.5] {
            var rssi = SmoothedRSSI(timeConstant: .seconds(3))
            rssi.add(-50, at: at(0))
            #expect(rssi.value == -50)
            var time = 0.0
            while time < 3 - 1e-9 {
                time += interval
                rssi.add(-80, at: at(time))
            }
            // After one time constant: 63 % of the 30 dB step, at any advertising interval.
            let covered = (-50 - (rssi.value ?? 0)) / 30
            #expect(abs(covered - (1 - exp(-1))) < 0.01, "interval \(interval): covered \(covered)")
        }
        // A single outlier moves the value only by its weight.
        var rssi = SmoothedRSSI(timeConstant: .seconds(3))
        rssi.add(-60, at: at(0))
        rssi.add(-90, at: at(1))
        #expect(abs((rssi.value ?? 0) - (-60 - 30 * (1 - exp(-1.0 / 3)))) < 0.001)
        // Without smoothing the value is the last sample.
        var raw = SmoothedRSSI(timeConstant: .zero)
        raw.add(-60, at: at(0))
        raw.add(-70, at: at(1))
        #expect(raw.value == -70)
    }

    @Test func theDistanceIsTheLogDistanceModelFromTheSignalAtOneMetre() {
        #expect(abs(SmoothedRSSI.distance(rssi: -59, reference: -59, exponent: 2.5) - 1) < 1e-9)
        // 25 dB below the 1 m signal with n = 2.5: 10 m; with n = 2: 10^(25/20).
        #expect(abs(SmoothedRSSI.distance(rssi: -84, reference: -59, exponent: 2.5) - 10) < 1e-9)
        #expect(abs(SmoothedRSSI.distance(rssi: -84, reference: -59, exponent: 2) - pow(10, 1.25)) < 1e-9)
        // iBeacon: measured power at 1 m; Eddystone: TX power at 0 m, 41 dB above 1 m.
        #expect(PresenceCoordinator.advertisedPower(decoder: "ibeacon", fields: ["measured_power": -62]) == -62)
        #expect(PresenceCoordinator.advertisedPower(decoder: "eddystone", fields: ["tx_power": -18]) == -59)
        #expect(PresenceCoordinator.advertisedPower(decoder: "bthome", fields: ["tx_power": -18]) == nil)
    }

    func report(_ gateway: String, _ room: String, _ distance: Double, at seconds: Double) -> RoomElection.Report {
        RoomElection.Report(gateway: gateway, room: room, distance: distance, at: at(seconds))
    }

    @Test func theNearestGatewayGivesTheRoomAtOnceWhenNobodyHasIt() {
        var election = RoomElection(rules: RoomElection.Rules())
        election.received(report("gw-b", "living", 4, at: 0))
        #expect(election.choice == RoomElection.Choice(gateway: "gw-b", room: "living"))
        var fresh = RoomElection(rules: RoomElection.Rules())
        // Equal distances: the smaller id, in either order.
        fresh.received(report("gw-c", "office", 2, at: 0))
        fresh.received(report("gw-a", "kitchen", 2, at: 0))
        var other = RoomElection(rules: RoomElection.Rules())
        other.received(report("gw-a", "kitchen", 2, at: 0))
        other.received(report("gw-c", "office", 2, at: 0))
        #expect(other.choice?.gateway == "gw-a")
        // gw-c came first and holds: a tie is no lead.
        #expect(fresh.choice?.gateway == "gw-c")
        fresh.tick(at: at(10))
        #expect(fresh.choice?.gateway == "gw-c")
    }

    /// Two gateways whose distances swap back and forth by 10 % every second (noise around equal
    /// signals): the room stays; a real move (40 % nearer, held) moves it after the switch delay.
    @Test func theRoomDoesNotFlapWhenTwoGatewaysSwapTheLeadInsideTheMargin() {
        var election = RoomElection(rules: RoomElection.Rules(margin: 0.2, switchDelay: .seconds(2)))
        election.received(report("gw-a", "kitchen", 3.0, at: 0))
        election.received(report("gw-b", "living", 3.1, at: 0))
        var rooms: [String] = []
        for second in 1...30 {
            let near = second.isMultiple(of: 2)
            election.received(report("gw-a", "kitchen", near ? 2.9 : 3.3, at: Double(second)))
            election.received(report("gw-b", "living", near ? 3.3 : 2.9, at: Double(second)))
            rooms.append(election.choice?.room ?? "-")
        }
        #expect(Set(rooms) == ["kitchen"], "\(rooms)")
        // A lead past the margin that ends before the switch delay moves nothing.
        election.received(report("gw-b", "living", 1.5, at: 31))
        election.received(report("gw-b", "living", 1.5, at: 32.5))
        election.received(report("gw-b", "living", 3.0, at: 32.9))
        election.tick(at: at(34))
        #expect(election.choice?.room == "kitchen")
        // Held for the switch delay: the room moves, once.
        election.received(report("gw-b", "living", 1.5, at: 35))
        #expect(election.nextCheck == at(37))
        election.tick(at: at(36.9))
        #expect(election.choice?.room == "kitchen")
        election.tick(at: at(37))
        #expect(election.choice == RoomElection.Choice(gateway: "gw-b", room: "living"))
    }

    @Test func aGatewayThatStopsReportingOrGoesOfflineDropsOut() {
        var election = RoomElection(rules: RoomElection.Rules(timeout: .seconds(15)))
        election.received(report("gw-a", "kitchen", 1, at: 0))
        election.received(report("gw-b", "living", 5, at: 0))
        election.received(report("gw-b", "living", 5, at: 10))
        #expect(election.nextCheck == at(15))
        election.tick(at: at(15))
        // gw-a's last report is 15 s old: the room is gw-b's at once (no switch delay).
        #expect(election.choice?.room == "living")
        election.remove("gw-b", at: at(16))
        #expect(election.choice == nil)
        #expect(election.nextCheck == nil)
    }

    func settings() -> PresenceCoordinator.Settings {
        PresenceCoordinator.Settings(
            rules: RoomElection.Rules(margin: 0.2, switchDelay: .seconds(2), timeout: .seconds(15)),
            pathLossExponent: 2.5, referencePower: -59, smoothing: .seconds(3), interval: .seconds(1),
            renewal: .seconds(5))
    }

    @Test func presenceIsPublishedAtOnceThenOnChangeAtMostEverySecondAndRenewed() {
        var presence = PresenceCoordinator(settings: settings(), txPower: ["phone": -65])
        // Not before the broker is there.
        #expect(presence.handle(.heard("phone", rssi: -65, advertised: nil), at: at(0)).isEmpty)
        #expect(presence.handle(.broker(connected: true), at: at(0)).isEmpty)
        // The configured tx_power: -65 dBm heard at -65 is 1 m.
        #expect(
            presence.handle(.heard("phone", rssi: -65, advertised: nil), at: at(0.1))
                == [.publish("phone", rssi: -65, distance: 1)])
        // Unchanged: nothing until the renewal.
        var published: [Double] = []
        for tenth in 2...60 {
            let actions = presence.handle(.heard("phone", rssi: -65, advertised: nil), at: at(Double(tenth) / 10))
            published += actions.map { _ in Double(tenth) / 10 }
        }
        #expect(published == [5.1])
        // A step: the first sample that moved 1 dB or more goes out (the second, 0.66 dB after the first),
        // then at most one a second.
        var changes: [Double] = []
        for tenth in 61...90 {
            let actions = presence.handle(.heard("phone", rssi: -85, advertised: nil), at: at(Double(tenth) / 10))
            changes += actions.map { _ in Double(tenth) / 10 }
        }
        #expect(changes == [6.2, 7.2, 8.2], "\(changes)")
        // An iBeacon's measured power wins over tx_power.
        var beacon = PresenceCoordinator(settings: settings(), txPower: ["beacon": -40])
        _ = beacon.handle(.broker(connected: true), at: at(0))
        let actions = beacon.handle(.heard("beacon", rssi: -84, advertised: -59), at: at(0))
        #expect(actions == [.publish("beacon", rssi: -84, distance: 10)])
    }

    @Test func aHeldDeviceKeepsItsPresenceWhileTheLinkIsUpAndLosesItWhenItGoes() {
        var presence = PresenceCoordinator(settings: settings())
        _ = presence.handle(.broker(connected: true), at: at(0))
        #expect(presence.handle(.heard("strap", rssi: -59, advertised: nil), at: at(0)).count == 1)
        // Connected: the strap stops advertising. Its presence is renewed at each renewal from
        // the timer, with the last value, for as long as the link is up.
        _ = presence.handle(.holding("strap", true), at: at(1))
        #expect(presence.nextDeadline == at(5))
        #expect(presence.handle(.tick, at: at(5)) == [.publish("strap", rssi: -59, distance: 1)])
        #expect(presence.nextDeadline == at(10))
        #expect(presence.handle(.tick, at: at(7)).isEmpty)
        #expect(presence.handle(.tick, at: at(10)) == [.publish("strap", rssi: -59, distance: 1)])
        // The link went: no more renewals, the others' timeout drops this gateway.
        _ = presence.handle(.holding("strap", false), at: at(12))
        #expect(presence.nextDeadline == nil)
        #expect(presence.handle(.tick, at: at(15)).isEmpty)
        // Not heard before the link: nothing to renew.
        _ = presence.handle(.holding("lamp", true), at: at(16))
        #expect(presence.nextDeadline == nil)
        #expect(presence.handle(.tick, at: at(30)).isEmpty)
    }

    @Test func theRoomIsAnnouncedAfterTheWarmUpAndThenOnlyWhenItChanges() {
        var presence = PresenceCoordinator(settings: settings())
        let kitchen = PresenceReport(rssi: -60, distance: 1.2, room: "kitchen")
        let living = PresenceReport(rssi: -70, distance: 3, room: "living")
        _ = presence.handle(.broker(connected: true), at: at(0))
        #expect(presence.handle(.report(gateway: "gw-b", device: "phone", living), at: at(0.5)).isEmpty)
        #expect(presence.room(of: "phone")?.room == "living")
        #expect(presence.handle(.report(gateway: "gw-a", device: "phone", kitchen), at: at(1)).isEmpty)
        // The warm-up (one renewal) ends: the room as it is then.
        // gw-a leads by more than the margin since 1 s: the room moves after the switch delay.
        #expect(presence.nextDeadline == at(3))
        _ = presence.handle(.tick, at: at(3))
        #expect(presence.nextDeadline == at(5))
        #expect(
            presence.handle(.tick, at: at(5)) == [.room("phone", RoomElection.Choice(gateway: "gw-a", room: "kitchen"))]
        )
        // Renewals that change nothing announce nothing.
        #expect(presence.handle(.report(gateway: "gw-a", device: "phone", kitchen), at: at(6)).isEmpty)
        // gw-a's will: the room moves to gw-b at once; gw-b silent for the timeout: away.
        #expect(
            presence.handle(.gateway("gw-a", online: false), at: at(7))
                == [.room("phone", RoomElection.Choice(gateway: "gw-b", room: "living"))])
        _ = presence.handle(.report(gateway: "gw-b", device: "phone", living), at: at(8))
        #expect(presence.nextDeadline == at(23))
        #expect(presence.handle(.tick, at: at(23)) == [.room("phone", nil)])
        #expect(presence.handle(.tick, at: at(30)).isEmpty)
    }
}
