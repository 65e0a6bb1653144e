import Gateway
import Testing

/// Shared-broker mode, passive devices (docs/multi-gateway.md, "De-duplication of passive
/// readings"): the gateway with the best signal alone publishes a passive sensor that several hear,
/// with the ownership's hysteresis and without connection slots.
@Suite struct OwnershipPassiveTests {
    typealias Installation = OwnershipCoordinatorTests.Installation

    func publishers(_ home: Installation, _ device: String = "bthome") -> Set<String> {
        Set(home.nodes.filter { $0.value.publishes(device) }.keys)
    }

    @Test func theStrongestAlonePublishesEvenWithNoFreeSlot() {
        var home = Installation(["gw-a", "gw-b", "gw-c"], devices: [], passive: ["bthome"], slots: 0)
        home.hear(["gw-c": -80, "gw-b": -75, "gw-a": -55], device: "bthome")
        home.run(until: 5)
        #expect(home.owners(of: "bthome") == ["gw-a"])
        #expect(publishers(home) == ["gw-a"])
        #expect(home.nodes["gw-a"]!.isPassive("bthome"))
        // Its candidacy says it holds (publishes) the device, so a challenger needs the margin and the delay.
        #expect(home.nodes["gw-a"]!.lastPublished("bthome")?.holding == true)
    }

    @Test func withoutAnOwnerEveryGatewayThatHearsItPublishes() {
        let lone = OwnershipCoordinator(me: "gw-a", devices: [], passive: ["bthome"], freeSlots: 5)
        #expect(lone.publishes("bthome"))
        #expect(lone.owner(of: "bthome") == nil)
        // A device not under ownership is always published.
        #expect(lone.publishes("elsewhere"))
    }

    @Test func theOwnersWillHandsPublishingToTheNextBestAtOnce() {
        var home = Installation(["gw-a", "gw-b", "gw-c"], devices: [], passive: ["bthome"])
        home.hear(["gw-a": -50, "gw-b": -62, "gw-c": -75], device: "bthome")
        home.run(until: 2)
        #expect(publishers(home) == ["gw-a"])
        home.kill("gw-a")
        #expect(publishers(home) == ["gw-b"])
    }

    @Test func aChallengerTakesOverOnceAfterTheSwitchDelayAndNeverTwoPublishAtOnce() {
        var home = Installation(["gw-a", "gw-b"], devices: [], passive: ["bthome"])
        home.hear(["gw-a": -60], device: "bthome")
        home.run(until: 1)
        #expect(publishers(home) == ["gw-a"])
        var history: [Set<String>] = [publishers(home)]
        var second = 1.0
        while second < 40 {
            // gw-b comes 12 dB closer: past the 6 dB margin.
            home.hear(["gw-a": -60, "gw-b": -48], device: "bthome")
            second += 0.5
            home.run(until: second)
            let now = publishers(home)
            #expect(now.count == 1, "at \(second) s: \(now)")
            if history.last != now { history.append(now) }
        }
        #expect(history == [["gw-a"], ["gw-b"]])
        #expect(home.takes("bthome") == ["gw-a", "gw-b"])
    }

    @Test func aReloadThatMakesADevicePassiveStartsItsElectionOver() {
        var node = OwnershipCoordinator(me: "gw-a", devices: ["sensor"], freeSlots: 5)
        #expect(!node.isPassive("sensor"))
        _ = node.handle(.devices([], passive: ["sensor"]), at: .now)
        #expect(node.isPassive("sensor"))
        #expect(node.governs("sensor"))
    }
}
