import Gateway
import Testing

/// ``OwnershipCoordinator`` without I/O: several gateways' coordinators joined by an in-memory
/// broker that delivers every candidacy to all of them (the sender's echo included) in one order,
/// and a connection pool that connects at once. Time is a manual clock.
@Suite struct OwnershipCoordinatorTests {
    typealias Coordinator = OwnershipCoordinator

    /// The gateways, the broker and their pools.
    struct Installation {
        let t0 = ContinuousClock.now
        var now: ContinuousClock.Instant
        var nodes: [String: Coordinator] = [:]
        /// Messages on their way through the broker: (sender, device, candidacy or withdrawal).
        var queue: [(String, String, OwnershipCandidacy?)] = []
        /// Local events waiting (a pool's link going up or down).
        var local: [(String, Coordinator.Event)] = []
        /// Every action, by gateway, in order.
        var actions: [(String, Coordinator.Action)] = []
        /// Who is linked to each device now.
        var linked: [String: Set<String>] = [:]
        var published = 0
        /// Passive devices: a take or release changes who publishes them, and no link follows.
        let passive: Set<String>

        init(_ ids: [String], devices: Set<String> = ["strap"], passive: Set<String> = [], slots: Int = 5) {
            now = t0
            self.passive = passive
            for id in ids {
                nodes[id] = Coordinator(me: id, devices: devices, passive: passive, freeSlots: slots)
            }
            for id in ids {
                send(id, .broker(connected: true))
                for other in ids where other != id { send(id, .gateway(other, online: true)) }
            }
        }

        mutating func advance(to seconds: Double) {
            now = t0 + .milliseconds(Int(seconds * 1000))
        }

        /// Feeds one event and lets everything it causes settle.
        mutating func send(_ id: String, _ event: Coordinator.Event) {
            local.append((id, event))
            pump()
        }

        mutating func pump() {
            while !local.isEmpty || !queue.isEmpty {
                if !local.isEmpty {
                    let (id, event) = local.removeFirst()
                    guard var node = nodes[id] else { continue }
                    let out = node.handle(event, at: now)
                    nodes[id] = node
                    for action in out { perform(id, action) }
                } else {
                    let (sender, device, candidacy) = queue.removeFirst()
                    for id in nodes.keys.sorted() {
                        local.append((id, .candidacy(gateway: sender, device: device, candidacy)))
                    }
                }
            }
        }

        mutating func perform(_ id: String, _ action: Coordinator.Action) {
            actions.append((id, action))
            switch action {
            case .publish(let device, let candidacy):
                published += 1
                queue.append((id, device, candidacy))
            case .withdraw(let device):
                queue.append((id, device, nil))
            case .take(let device):
                linked[device, default: []].insert(id)
                if !passive.contains(device) { local.append((id, .linked(device, true))) }
            case .release(let device):
                linked[device, default: []].remove(id)
                if !passive.contains(device) { local.append((id, .linked(device, false))) }
            case .ownerChanged:
                break
            }
        }

        /// A gateway dies: its coordinator is gone and the others read its last will.
        mutating func kill(_ id: String) {
            nodes[id] = nil
            for device in linked.keys { linked[device]?.remove(id) }
            for other in nodes.keys.sorted() { local.append((other, .gateway(id, online: false))) }
            pump()
        }

        /// Ticks every coordinator at its deadline until `seconds`.
        mutating func run(until seconds: Double) {
            let end = t0 + .milliseconds(Int(seconds * 1000))
            var ticks = 0
            while let next = nodes.compactMap({ id, node in node.nextDeadline.map { (id, $0) } })
                .min(by: { $0.1 < $1.1 }), next.1 <= end
            {
                now = max(now, next.1)
                send(next.0, .tick)
                ticks += 1
                // A deadline that does not move on after its tick would spin here.
                guard ticks < 10_000 else {
                    Issue.record("more than 10 000 ticks before \(seconds) s")
                    return
                }
            }
            now = end
        }

        /// Every gateway hears the device once, at its RSSI.
        mutating func hear(_ rssi: [String: Int], device: String = "strap") {
            for (id, value) in rssi.sorted(by: { $0.key < $1.key }) where nodes[id] != nil {
                send(id, .heard(device, rssi: value))
            }
        }

        func owners(of device: String = "strap") -> Set<String?> { Set(nodes.values.map { $0.owner(of: device) }) }

        func takes(_ device: String = "strap") -> [String] {
            actions.compactMap { id, action in action == .take(device) ? id : nil }
        }
    }

    @Test func aGatewayAloneTakesTheDeviceOnceItsCandidacyComesBack() {
        var home = Installation(["gw-a"])
        home.hear(["gw-a": -60])
        #expect(home.takes() == ["gw-a"])
        #expect(home.linked["strap"] == ["gw-a"])
        // Its candidacy says it holds the device after the take (at the end of the 1 s bound).
        home.run(until: 1.5)
        let last = home.actions.last { if case .publish = $0.1 { true } else { false } }
        #expect(last?.1 == .publish("strap", OwnershipCandidacy(rssi: -60, freeSlots: 5, holding: true)))
    }

    @Test func threeGatewaysAgreeOnTheStrongestAndOnlyItConnects() {
        var home = Installation(["gw-a", "gw-b", "gw-c"])
        // All heard within the same instant, weakest first.
        home.hear(["gw-c": -80, "gw-b": -75, "gw-a": -55])
        home.run(until: 5)
        #expect(home.owners() == ["gw-a"])
        #expect(home.linked["strap"] == ["gw-a"])
        for id in ["gw-a", "gw-b", "gw-c"] {
            let duty = home.nodes[id]!.duty(for: "strap")
            #expect(duty == (id == "gw-a" ? .owner : .silent(owner: "gw-a")))
        }
    }

    @Test func theOwnersWillMovesTheDeviceToTheBestStandbyAndItsReturnHandsItBackOnce() {
        var home = Installation(["gw-a", "gw-b", "gw-c"])
        home.hear(["gw-a": -50, "gw-b": -62, "gw-c": -75])
        home.run(until: 2)
        #expect(home.linked["strap"] == ["gw-a"])
        // SIGKILL of gw-a: its will reaches the others; gw-b takes it at once.
        home.kill("gw-a")
        #expect(home.linked["strap"] == ["gw-b"])
        #expect(home.owners() == ["gw-b"])
        // gw-a comes back: a new coordinator, online again, hearing the device 12 dB better.
        home.nodes["gw-a"] = Coordinator(me: "gw-a", devices: ["strap"], freeSlots: 5)
        home.send("gw-a", .broker(connected: true))
        for other in ["gw-b", "gw-c"] {
            home.send("gw-a", .gateway(other, online: true))
            home.send(other, .gateway("gw-a", online: true))
        }
        // The others' current candidacies reach the newcomer as retained messages.
        for other in ["gw-b", "gw-c"] {
            home.send("gw-a", .candidacy(gateway: other, device: "strap", home.nodes[other]!.lastPublished("strap")))
        }
        let back = 10.0
        home.advance(to: back)
        // Everyone keeps hearing the device (gw-b's link does not stop the others' advertisements here).
        var second = back
        while second < back + 30 {
            home.hear(["gw-a": -50, "gw-b": -62, "gw-c": -75])
            second += 1
            home.run(until: second)
        }
        #expect(home.linked["strap"] == ["gw-a"])
        #expect(home.owners() == ["gw-a"])
        // Taken by gw-a, by gw-b at the will, by gw-a again after the switch delay: no other change.
        #expect(home.takes() == ["gw-a", "gw-b", "gw-a"])
        // Release-first: gw-b's release comes before gw-a's second take.
        let releases = home.actions.enumerated().filter { $0.element.0 == "gw-b" && $0.element.1 == .release("strap") }
        let retakes = home.actions.enumerated().filter { $0.element.0 == "gw-a" && $0.element.1 == .take("strap") }
        #expect(releases.count == 1)
        #expect((releases.first?.offset ?? .max) < (retakes.last?.offset ?? .min))
    }

    @Test func aLeadInsideTheMarginNeverMovesTheDevice() {
        var home = Installation(["gw-a", "gw-b"])
        home.hear(["gw-a": -60])
        home.run(until: 1)
        var second = 1.0
        while second < 60 {
            // gw-b is 5 dB better: inside the 6 dB margin.
            home.hear(["gw-a": -60, "gw-b": -55])
            second += 1
            home.run(until: second)
        }
        #expect(home.takes() == ["gw-a"])
        #expect(home.owners() == ["gw-a"])
    }

    @Test func theDeviceLostByItsHolderGoesToTheStandby() {
        var home = Installation(["gw-a", "gw-b"])
        home.hear(["gw-a": -50, "gw-b": -70])
        home.run(until: 2)
        #expect(home.linked["strap"] == ["gw-a"])
        // gw-a's silence watchdog gives up: it lets go and withdraws; gw-b takes it.
        home.send("gw-a", .lost("strap"))
        #expect(home.linked["strap"] == ["gw-b"])
        #expect(home.owners() == ["gw-b"])
        #expect(home.actions.contains { $0.0 == "gw-a" && $0.1 == .withdraw("strap") })
    }

    /// A steady strap (service UUIDs and a name, an RSSI that never moves) is reported once by
    /// bluetoothd, which keeps its object while it advertises: a standby keeps its candidacy as
    /// long, and takes the strap when the owner dies long after (here 90 s).
    @Test func aStandbyReportedOnceKeepsItsCandidacyWhileBlueZKeepsTheDeviceAndTakesItLater() {
        var home = Installation(["gw-a", "gw-b"])
        let before = home.actions.count
        home.hear(["gw-a": -50, "gw-b": -62])
        home.run(until: 90)
        #expect(home.linked["strap"] == ["gw-a"])
        #expect(home.nodes["gw-b"]!.lastPublished("strap") != nil)
        #expect(!home.actions.dropFirst(before).contains { $0.0 == "gw-b" && $0.1 == .withdraw("strap") })
        home.kill("gw-a")
        #expect(home.linked["strap"] == ["gw-b"])
        #expect(home.owners() == ["gw-b"])
    }

    /// A device truly gone: bluetoothd removes its object (30 s after its last advertisement), and
    /// the standby's candidacy ends; the owner's death then leaves nobody to take it.
    @Test func aStandbyWhoseDeviceObjectBlueZRemovedWithdraws() {
        var home = Installation(["gw-a", "gw-b"])
        home.hear(["gw-a": -50, "gw-b": -62])
        home.run(until: 40)
        home.send("gw-b", .vanished("strap"))
        #expect(home.nodes["gw-b"]!.lastPublished("strap") == nil)
        #expect(home.actions.contains { $0.0 == "gw-b" && $0.1 == .withdraw("strap") })
        // Heard within the window, the object's removal ends nothing yet (a `RemoveDevice` of a
        // device still advertising is followed by its next report).
        home.hear(["gw-b": -62])
        home.send("gw-b", .vanished("strap"))
        home.run(until: 42)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") != nil)
        home.run(until: 71)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") == nil)
        home.kill("gw-a")
        #expect(home.owners() == [nil])
    }

    /// bluetoothd keeps the object of a device this gateway linked for good: its presence says
    /// nothing, and a former holder's candidacy ends with its window as before.
    @Test func theObjectOfADeviceOnceLinkedHereDoesNotKeepTheCandidacy() {
        var home = Installation(["gw-a", "gw-b"])
        home.hear(["gw-b": -62])
        home.run(until: 1)
        #expect(home.linked["strap"] == ["gw-b"])
        // gw-a hears it 12 dB better for 15 s: after the switch delay gw-b releases it to gw-a.
        var second = 1.0
        while second < 16 {
            home.hear(["gw-a": -50])
            second += 1
            home.run(until: second)
        }
        #expect(home.linked["strap"] == ["gw-a"])
        home.run(until: 45)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") == nil)
    }

    /// A device BlueZ restored from an earlier run (or paired, or trusted) keeps its object for
    /// good: heard once, its candidacy ends with the window.
    @Test func theObjectOfARestoredOrPairedDeviceDoesNotKeepTheCandidacy() {
        var home = Installation(["gw-a", "gw-b"])
        home.hear(["gw-a": -50])
        home.send("gw-b", .persistent("strap"))
        home.hear(["gw-b": -62])
        home.run(until: 2)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") != nil)
        home.run(until: 45)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") == nil)
        // Its object removed and made again by an advertisement: temporary, it counts again.
        home.send("gw-b", .vanished("strap"))
        home.hear(["gw-b": -62])
        home.run(until: 90)
        #expect(home.nodes["gw-b"]!.lastPublished("strap") != nil)
    }

    @Test func candidaciesAreRateBoundAndRenewedOnTheClock() {
        var home = Installation(["gw-a"])
        // 100 advertisements in one second, RSSI swinging by 10 dB.
        for step in 0..<100 {
            home.advance(to: Double(step) / 100)
            home.send("gw-a", .heard("strap", rssi: step.isMultiple(of: 2) ? -50 : -60))
        }
        home.run(until: 0.999)
        let early = home.published
        #expect(early == 1, "published \(early) times in the first second")
        // Then once at the end of the bound (holding changed), then every 10 s while nothing changes.
        home.run(until: 30.5)
        let renewals = home.published - early
        #expect((3...4).contains(renewals), "\(renewals) publications in 29.5 s")
        // A device no longer heard (and not linked) is withdrawn when its last sample leaves the window.
        let before = home.actions.count
        home.send("gw-a", .lost("strap"))
        let after = home.actions.dropFirst(before).map(\.1)
        #expect(after.contains(.release("strap")) && after.contains(.withdraw("strap")), "\(after)")
        #expect(home.owners() == [nil])
    }

    @Test func aCandidacyFromAGatewayNotOnlineWaitsForItsRecordAndAnOfflineOneIsDropped() {
        var onA = Coordinator(me: "gw-a", devices: ["strap"], freeSlots: 5)
        let t0 = ContinuousClock.now
        _ = onA.handle(.broker(connected: true), at: t0)
        let strong = OwnershipCandidacy(rssi: -40, freeSlots: 5, holding: true)
        // gw-z's retained candidacy arrives before its record: not counted yet.
        _ = onA.handle(.candidacy(gateway: "gw-z", device: "strap", strong), at: t0)
        #expect(onA.owner(of: "strap") == nil)
        #expect(onA.duty(for: "strap") == .speaker)
        _ = onA.handle(.gateway("gw-z", online: true), at: t0)
        #expect(onA.owner(of: "strap") == "gw-z")
        #expect(onA.duty(for: "strap") == .silent(owner: "gw-z"))
        // Its will: dropped; nobody else hears the device, and gw-a is the smallest id left.
        _ = onA.handle(.gateway("gw-z", online: false), at: t0)
        #expect(onA.owner(of: "strap") == nil)
        #expect(onA.duty(for: "strap") == .speaker)
        // A retained candidacy of a gateway whose record is offline is never counted.
        _ = onA.handle(.candidacy(gateway: "gw-z", device: "strap", strong), at: t0)
        #expect(onA.owner(of: "strap") == nil)
        // With gw-0 online (a smaller id), gw-a is no longer the speaker.
        _ = onA.handle(.gateway("gw-0", online: true), at: t0)
        #expect(onA.duty(for: "strap") == .silent(owner: nil))
    }

    @Test func aNewBrokerConnectionRepublishesOrWithdrawsEveryCandidacy() {
        var onA = Coordinator(me: "gw-a", devices: ["lamp", "strap"], freeSlots: 5)
        let t0 = ContinuousClock.now
        // Heard while the broker was away: nothing published.
        #expect(onA.handle(.heard("strap", rssi: -60), at: t0).isEmpty)
        let actions = onA.handle(.broker(connected: true), at: t0 + .seconds(1))
        #expect(
            actions == [
                .withdraw("lamp"), .publish("strap", OwnershipCandidacy(rssi: -60, freeSlots: 5, holding: false)),
            ])
    }

    @Test func theCandidacyPayloadRoundTripsAndRejectsWhatIsNotOne() {
        let candidacy = OwnershipCandidacy(rssi: -63.54, freeSlots: 3, holding: true)
        #expect(
            String(decoding: candidacy.json.bytes, as: UTF8.self) == #"{"rssi":-63.5,"free_slots":3,"holding":true}"#)
        #expect(OwnershipCandidacy(payload: candidacy.json.bytes) == candidacy)
        for bad in [#"{"rssi":-63}"#, "[]", "nope", #"{"rssi":99,"free_slots":1,"holding":false}"#] {
            #expect(OwnershipCandidacy(payload: Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
