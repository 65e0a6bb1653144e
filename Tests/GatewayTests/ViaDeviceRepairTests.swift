import Gateway
import Testing

/// ``ViaDeviceRepair`` on a manual clock: the owner announces again a config that names another
/// gateway's bridge, never loops on its own echo, and two gateways that both believe they own a
/// device stop announcing it back and forth.
@Suite struct ViaDeviceRepairTests {
    let t0 = ContinuousClock.now
    let topic = "homeassistant/sensor/blebridge_lamp/power/config"

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    @Test func theOwnerAnnouncesAgainAConfigNamingAnotherBridgeAndItsEchoSettlesIt() {
        var repair = ViaDeviceRepair(bridge: "gw-b_bridge")
        repair.owning("lamp", true, at: at(0))
        // Its own echo: nothing.
        #expect(repair.received(topic: topic, device: "lamp", via: "gw-b_bridge", at: at(0.1)).isEmpty)
        #expect(repair.nextDeadline == nil)
        // gw-a's late announcement (it owned the lamp for a moment at the start): announced again at once.
        #expect(
            repair.received(topic: topic, device: "lamp", via: "gw-a_bridge", at: at(0.2))
                == [.announce(topic: topic, device: "lamp")])
        // The echo of that settles it: no timer, nothing more.
        #expect(repair.received(topic: topic, device: "lamp", via: "gw-b_bridge", at: at(0.3)).isEmpty)
        #expect(repair.nextDeadline == nil)
        #expect(repair.tick(at: at(60)).isEmpty)
        // A deleted config (an empty payload) is nothing to repair either.
        #expect(repair.received(topic: topic, device: "lamp", via: nil, at: at(61)).isEmpty)
    }

    @Test func aStandbyRepairsNothingAndANewOwnerCountsItsAnnouncementAsTheFirstRepair() {
        var repair = ViaDeviceRepair(bridge: "gw-c_bridge")
        // Retained configs at subscribe time, while gw-c owns nothing.
        #expect(repair.received(topic: topic, device: "lamp", via: "gw-a_bridge", at: at(0)).isEmpty)
        #expect(repair.nextDeadline == nil)
        // gw-c becomes the owner and announces everything it has: the topic is announced again
        // only if the broker still names another bridge a second later (a field gw-c has not seen).
        repair.owning("lamp", true, at: at(5))
        #expect(repair.nextDeadline == at(6))
        #expect(repair.tick(at: at(5.5)).isEmpty)
        #expect(repair.tick(at: at(6)) == [.announce(topic: topic, device: "lamp")])
        // No longer the owner: a stale config is the new owner's to repair.
        repair.owning("lamp", false, at: at(7))
        #expect(repair.received(topic: topic, device: "lamp", via: "gw-d_bridge", at: at(8)).isEmpty)
        #expect(repair.nextDeadline == nil)
    }

    /// Two gateways that both believe they own the lamp, on one broker that delivers every config
    /// to both in one order: each repairs the other's announcement a bounded number of times,
    /// further and further apart, then gives up; nothing runs forever.
    @Test func twoGatewaysThatBothBelieveTheyOwnTheDeviceDoNotAnnounceItBackAndForthForever() {
        var repairs = ["gw-a": ViaDeviceRepair(bridge: "gw-a_bridge"), "gw-b": ViaDeviceRepair(bridge: "gw-b_bridge")]
        for id in repairs.keys.sorted() { repairs[id]!.owning("lamp", true, at: at(0)) }
        var broker: [String] = ["gw-a_bridge", "gw-b_bridge"]
        var now = 0.0
        var announced: [String: [Double]] = [:]
        var gaveUp: [String] = []
        func perform(_ id: String, _ actions: [ViaDeviceRepair.Action]) {
            for action in actions {
                switch action {
                case .announce:
                    announced[id, default: []].append(now)
                    broker.append("\(id)_bridge")
                case .gaveUp(_, _, let bridge):
                    gaveUp.append("\(id) (\(bridge))")
                }
            }
        }
        var steps = 0
        while steps < 1000 {
            steps += 1
            if !broker.isEmpty {
                let via = broker.removeFirst()
                for id in repairs.keys.sorted() {
                    perform(id, repairs[id]!.received(topic: topic, device: "lamp", via: via, at: at(now)))
                }
            } else if let next = repairs.values.compactMap(\.nextDeadline).min() {
                let elapsed = next - t0
                now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                for id in repairs.keys.sorted() { perform(id, repairs[id]!.tick(at: next)) }
            } else {
                break
            }
        }
        #expect(steps < 1000, "still announcing after \(steps) steps")
        let limit = ViaDeviceRepair.Settings().maximumRepairs
        #expect(announced.values.allSatisfy { $0.count <= limit }, "\(announced)")
        #expect(!gaveUp.isEmpty)
        // Each gateway's repairs come further and further apart (1 s, 2 s, 4 s, …).
        for times in announced.values where times.count > 2 {
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(zip(gaps.dropFirst(), gaps).allSatisfy { $0 >= $1 }, "\(gaps)")
        }
    }

    @Test func theViaDeviceIsReadFromThePayload() {
        let payload = Array(
            #"{"name":"Power","device":{"identifiers":["blebridge_lamp"],"via_device":"gw-a_bridge"}}"#.utf8)
        #expect(ViaDeviceRepair.via(ofPayload: payload) == "gw-a_bridge")
        #expect(ViaDeviceRepair.via(ofPayload: []) == nil)
        #expect(ViaDeviceRepair.via(ofPayload: Array("not json".utf8)) == nil)
        #expect(ViaDeviceRepair.via(ofPayload: Array(#"{"device":{}}"#.utf8)) == nil)
    }
}
