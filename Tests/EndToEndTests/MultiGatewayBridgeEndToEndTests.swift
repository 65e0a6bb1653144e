import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 21 across a mosquitto bridge: two real brokers, broker B bridging `blebridge/#` both ways
/// to broker A (as between two sites), gw-a and gw-c on A, gw-b on B, each `blebridge run` on its
/// own private bus with its own simulated adapter. Every adapter hears the demo's strap, lamp and
/// BTHome sensor at its own RSSI: the strap nearest gw-a (A), the lamp and the sensor nearest gw-b
/// (B). So the strap fails over from A to B (gw-a's will must cross the bridge) and back, and the
/// sensor's states cross from B to A. Two recorders, one per broker, must see the same thing.
/// docs/multi-gateway.md, "Bridged brokers".
@Suite(.serialized) struct MultiGatewayBridgeEndToEndTests {
    typealias Member = SharedBrokerEndToEndTests.Member
    typealias View = MultiGatewayEndToEndTests.View
    /// dBm per gateway and device, and the humidity (%) each gateway's copy of the sensor sends
    /// (the generator swings ±3.1 % around it), so a state tells which gateway published it.
    static let rssi: [String: [String: Int16]] = [
        "gw-a": ["hr_strap": -50, "lamp": -74, "bthome": -70],
        "gw-b": ["hr_strap": -62, "lamp": -52, "bthome": -52],
        "gw-c": ["hr_strap": -75, "lamp": -80, "bthome": -81],
    ]
    static let humidity: [String: Double] = ["gw-a": 20, "gw-b": 50, "gw-c": 80]
    static let devices = ["hr_strap", "lamp", "bthome"]

    /// `jitter`: ± dB on each advertisement. Without it a connected device's advertisement (its
    /// service UUIDs) never changes, so bluetoothd reports it once and a standby's candidacy ends
    /// 30 s after it first heard it: enough for the failover test, not for a 30 s partition.
    static func scenario(_ id: String, jitter: Int16 = 0) throws -> Scenario {
        var scenario = try Scenario.load("demo")
        scenario.devices = scenario.devices.filter { devices.contains($0.id) }
        for index in scenario.devices.indices {
            scenario.devices[index].rssi = rssi[id]?[scenario.devices[index].id] ?? -90
            scenario.devices[index].rssiJitter = jitter
            for data in scenario.devices[index].advertisement.serviceData.indices {
                scenario.devices[index].advertisement.serviceData[data].generator?.humidity = humidity[id] ?? 0
            }
        }
        return scenario
    }

    static func configure(_ configuration: inout [String: Any]) {
        let configured = configuration["devices"] as? [[String: Any]] ?? []
        configuration["devices"] = configured.filter { devices.contains($0["id"] as? String ?? "") }
    }

    /// The gateway whose simulator sent `humidity`.
    static func source(_ humidity: Double) -> String {
        Self.humidity.min { abs($0.value - humidity) < abs($1.value - humidity) }!.key
    }

    /// Waits until a message published on `from` arrives at `to` through the bridge (the bridge
    /// connects a moment after broker B starts; what is published before is not forwarded).
    static func bridgeUp(from: MQTTRecorder, to: MQTTRecorder, _ label: String) async throws -> Bool {
        let topic = "blebridge/test/probe/\(label)"
        for attempt in 0..<60 {
            try await from.publish(topic, "\(attempt)")
            if await to.first(on: topic, timeout: .milliseconds(500)) != nil { return true }
        }
        return false
    }

    /// A recorder of the base topic on each broker; with `bridged`, once the bridge carries a
    /// message each way.
    static func recorders(
        _ brokerA: MosquittoFixture, _ brokerB: MosquittoFixture, bridged: Bool = true
    ) async throws -> (MQTTRecorder, MQTTRecorder) {
        let recorderA = try await MQTTRecorder(url: brokerA.url)
        let recorderB = try await MQTTRecorder(url: brokerB.url)
        try await recorderA.subscribe("blebridge/#")
        try await recorderB.subscribe("blebridge/#")
        if bridged {
            let bToA = try await bridgeUp(from: recorderB, to: recorderA, "b-to-a")
            let aToB = try await bridgeUp(from: recorderA, to: recorderB, "a-to-b")
            #expect(bToA && aToB, "the bridge never carried a message: \(brokerB.standardError)")
        }
        return (recorderA, recorderB)
    }

    /// gw-a and gw-c on broker A, gw-b on broker B, each hearing `scenario(id, jitter:)`.
    static func start(
        _ brokerA: MosquittoFixture, _ brokerB: MosquittoFixture, jitter: Int16 = 0
    ) async throws -> [String: Member] {
        var members: [String: Member] = [:]
        for (id, broker) in [("gw-a", brokerA), ("gw-b", brokerB), ("gw-c", brokerA)] {
            members[id] = try await Member(
                id: id, brokerURL: broker.url, scenario: try scenario(id, jitter: jitter), edit: configure)
        }
        return members
    }

    /// The states of the sensor on one broker sampled after `instant` (their `ts`): the publishing
    /// gateway and the packet id of each, in arrival order.
    static func states(on recorder: MQTTRecorder, after instant: Date) -> [(gateway: String, packet: Int)] {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return recorder.on("blebridge/bthome").compactMap { message in
            guard let json = recorder.json(message), let ts = (json["ts"] as? String).flatMap(format.date),
                ts > instant, let humidity = json["humidity"] as? NSNumber
            else { return nil }
            return (source(humidity.doubleValue), (json["packet_id"] as? NSNumber)?.intValue ?? -1)
        }
    }

    @Test func ownershipFailoverAndDeduplicationHoldAcrossAMosquittoBridge() async throws {
        let brokerA = try await MosquittoFixture()
        let brokerB = try await MosquittoFixture(bridgingTo: brokerA, topics: ["blebridge/#"])
        let (recorderA, recorderB) = try await Self.recorders(brokerA, brokerB)
        let views = [View(recorder: recorderA), View(recorder: recorderB)]
        let started = Date()
        let members = try await Self.start(brokerA, brokerB)
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        func describe(_ device: String) -> String {
            zip(["A", "B"], views).map { "\($0): holders \($1.holders(device)) connected \($1.connected(device))" }
                .joined(separator: "; ")
        }

        // One owner per device, the same on both brokers: the nearest gateway holds it and alone
        // is connected; gw-b alone publishes the sensor.
        let owned = await recorderA.wait(timeout: .seconds(40)) { _ in
            views.allSatisfy {
                $0.settled("hr_strap", on: "gw-a") && $0.settled("lamp", on: "gw-b") && $0.holders("bthome") == ["gw-b"]
            }
        }
        #expect(
            owned, "strap \(describe("hr_strap")), lamp \(describe("lamp")), sensor \(describe("bthome"))\n\(logs())")
        let settledAt = Date()
        print(
            "multi-gateway bridge: owners settled \(Int(settledAt.timeIntervalSince(started) * 1000)) ms after the start"
        )

        // SIGKILL of the strap's owner (on A): its will crosses the bridge, and gw-b (on B) takes the strap.
        let killed = Date()
        members["gw-a"]!.gateway.process.signal(SIGKILL)
        await members["gw-a"]!.gateway.process.waitForExit()
        // A strap reading after the will on A was published by gw-b on B and crossed the bridge.
        let resumed = await SharedBrokerEndToEndTests.readingsResume(
            on: recorderA, topic: "blebridge/hr_strap", afterTheWillOf: "gw-a", killedAt: killed)
        let willA = await SharedBrokerEndToEndTests.recordArrival(
            "gw-a", "offline", on: recorderA, after: killed, timeout: .seconds(10))
        let willB = await SharedBrokerEndToEndTests.recordArrival(
            "gw-a", "offline", on: recorderB, after: killed, timeout: .seconds(10))
        #expect(
            willA != nil && willB != nil,
            "gw-a's will: on A \(String(describing: willA)), on B \(String(describing: willB))")
        let resumedMs = resumed.map { Int($0.timeIntervalSince(killed) * 1000) }
        #expect(resumed != nil, "no strap reading within 15 s (of this process's time) after the SIGKILL\n\(logs())")
        let failedOver = await recorderA.wait(timeout: .seconds(20)) { _ in
            views.allSatisfy { $0.settled("hr_strap", on: "gw-b") }
        }
        #expect(failedOver, "strap \(describe("hr_strap"))\n\(logs())")
        #expect(views.allSatisfy { $0.settled("lamp", on: "gw-b") })

        // gw-a returns: after the switch delay gw-b releases the strap (its candidacy crosses to A)
        // and gw-a takes it back, once.
        let restarted = Date()
        let again = try GatewayProcess(restarting: members["gw-a"]!.gateway)
        let handedBack = await recorderA.wait(timeout: .seconds(40)) { _ in
            views.allSatisfy {
                $0.settled("hr_strap", on: "gw-a") && $0.holderHistory("hr_strap", after: restarted).last == ["gw-a"]
            }
        }
        let backMs = Int(Date().timeIntervalSince(restarted) * 1000)
        #expect(handedBack, "strap \(describe("hr_strap"))\n\(again.log.suffix(3000))")
        // No flapping, on either broker: from the SIGKILL on, gw-b, then (released first) gw-a.
        for (name, view) in zip(["A", "B"], views) {
            let history = view.holderHistory("hr_strap", after: killed, changesOnly: true)
            #expect(
                history == [[], ["gw-b"], [], ["gw-a"]] || history == [["gw-b"], [], ["gw-a"]], "\(name): \(history)")
            #expect(view.holderHistory("lamp", after: started).allSatisfy { $0.count <= 1 }, "\(name)")
            #expect(view.holderHistory("bthome", after: settledAt).allSatisfy { $0 == ["gw-b"] }, "\(name)")
        }

        // The sensor: from the election on, every state is gw-b's, published once (no packet id
        // twice: nothing came back through the bridge), and both brokers carried the same states.
        let sampled = await recorderA.wait(timeout: .seconds(20)) { _ in
            Self.states(on: recorderA, after: settledAt).count >= 8
                && Self.states(on: recorderB, after: settledAt).count >= 8
        }
        let onA = Self.states(on: recorderA, after: settledAt)
        let onB = Self.states(on: recorderB, after: settledAt)
        #expect(sampled, "states on A \(onA.count), on B \(onB.count)")
        for (name, states) in [("A", onA), ("B", onB)] {
            #expect(Set(states.map(\.gateway)) == ["gw-b"], "\(name): \(states.map(\.gateway))\n\(logs())")
            #expect(Set(states.map(\.packet)).count == states.count, "\(name): packet ids \(states.map(\.packet))")
        }
        let common = min(onA.count, onB.count)
        #expect(
            onA.prefix(common).map(\.packet) == onB.prefix(common).map(\.packet),
            "A \(onA.map(\.packet)) B \(onB.map(\.packet))")
        print(
            "multi-gateway bridge: SIGKILL of gw-a (A) -> will on A "
                + "\(willA.map { "\(Int($0.timeIntervalSince(killed) * 1000)) ms" } ?? "never"), on B "
                + "\(willB.map { "\(Int($0.timeIntervalSince(killed) * 1000)) ms" } ?? "never"), strap readings from gw-b (B) "
                + "on A \(resumedMs.map { "\($0) ms" } ?? "never"); restart -> strap back on gw-a \(backMs) ms; "
                + "sensor states \(onA.count) on A, \(onB.count) on B, from \(Set(onA.map(\.gateway)).sorted()); "
                + "test \(Int(Date().timeIntervalSince(started))) s; load \(MultiGatewayEndToEndTests.loadAverage())")

        again.process.signal(SIGTERM)
        await again.process.waitForExit(timeout: .seconds(15))
        for member in members.values { await member.stop() }
        await recorderA.close()
        await recorderB.close()
        await brokerB.stop()
        await brokerA.stop()
    }

    /// The last candidacy of `gateway` for `device` that arrived at `recorder` after `after` says
    /// it holds the device: when it arrived.
    static func took(
        _ gateway: String, _ device: String, on recorder: MQTTRecorder, after: Date
    ) -> Date? {
        recorder.arrivals(on: "blebridge/bridge/gateways/\(gateway)/candidacy/\(device)").first {
            $0.arrival > after && recorder.json($0.message)?["holding"] as? Bool == true
        }?.arrival
    }

    /// A site whose bridge comes up after its gateway started (a power cut at site B: broker B,
    /// its bridge and gw-b start together, the bridge connects last). The gateways on A ignore
    /// gw-b's candidacies until its record comes (a candidacy waits for its gateway's record), and
    /// gw-b, hearing only the lamp, publishes no new record once the bridge is up: what carries it
    /// to A is broker B's retained record, which mosquitto sends across at the bridge's first
    /// connection (its local subscription is made then). docs/multi-gateway.md, "Bridged brokers".
    @Test func aGatewayThatStartedBeforeItsBridgeIsCountedOnTheFarSideOnceTheBridgeIsUp() async throws {
        let brokerA = try await MosquittoFixture()
        let relay = try TCPProxy(upstreamPort: brokerA.port)
        relay.cut()
        let brokerB = try await MosquittoFixture(
            extraConfiguration: MosquittoFixture.bridgeConfiguration(to: relay.port, topics: ["blebridge/#"]))
        let (recorderA, recorderB) = try await Self.recorders(brokerA, brokerB, bridged: false)
        let views = [View(recorder: recorderA), View(recorder: recorderB)]
        var members: [String: Member] = [:]
        for (id, broker) in [("gw-a", brokerA), ("gw-b", brokerB), ("gw-c", brokerA)] {
            var scenario = try Self.scenario(id)
            if id == "gw-b" { scenario.devices = scenario.devices.filter { $0.id == "lamp" } }
            members[id] = try await Member(
                id: id, brokerURL: broker.url, scenario: scenario, healthInterval: "5s", edit: Self.configure)
        }
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        // Each site on its own: gw-a holds the lamp on A, gw-b on B.
        let alone = await recorderA.wait(timeout: .seconds(40)) { _ in
            views[0].settled("lamp", on: "gw-a") && views[1].settled("lamp", on: "gw-b")
        }
        #expect(alone, "lamp on A \(views[0].holders("lamp")), on B \(views[1].holders("lamp"))\n\(logs())")
        #expect(recorderA.on("blebridge/bridge/gateways/gw-b").isEmpty)

        let healed = Date()
        relay.heal()
        let up = try await Self.bridgeUp(from: recorderB, to: recorderA, "late")
        #expect(up, "the bridge never carried a message: \(brokerB.standardError)")
        // gw-b's record reaches A, gw-a counts gw-b's candidacy and releases the lamp.
        let one = await recorderA.wait(timeout: .seconds(30)) { _ in views.allSatisfy { $0.settled("lamp", on: "gw-b") }
        }
        let recordOnA = recorderA.arrivals(on: "blebridge/bridge/gateways/gw-b").first?.arrival
        func ms(_ instant: Date?) -> String {
            instant.map { "\(Int($0.timeIntervalSince(healed) * 1000)) ms" } ?? "never"
        }
        let lampNow =
            "lamp holders on A \(views[0].holders("lamp")) (connected \(views[0].connected("lamp"))), on B \(views[1].holders("lamp"))"
        #expect(one, "gw-b's record on A \(ms(recordOnA)); \(lampNow)\n\(logs())")
        print(
            "multi-gateway bridge, late bridge: heal -> gw-b's record on A \(ms(recordOnA)), one lamp holder on both "
                + "brokers \(one ? ms(Date()) : "never"); load \(MultiGatewayEndToEndTests.loadAverage())")

        for member in members.values { await member.stop() }
        await recorderA.close()
        await recorderB.close()
        await brokerB.stop()
        relay.stop()
        await brokerA.stop()
    }

    /// A partition between the two sites: the bridge's connection goes through a relay that the
    /// test cuts (both brokers and all gateways keep running). No will crosses a cut bridge, so
    /// each side counts the other side's candidacies until their lifetime (30 s) runs out, then
    /// elects its own owner: each device is held on both sides. When the relay heals, the bridge
    /// reconnects and the candidacies cross again: the two holders meet and the better one keeps
    /// the device, the same on both brokers. docs/multi-gateway.md, "Bridged brokers".
    @Test func aCutBridgeMakesEachSiteElectItsOwnOwnerAndTheHealedBridgeBringsOneBack() async throws {
        let brokerA = try await MosquittoFixture()
        let relay = try TCPProxy(upstreamPort: brokerA.port)
        let brokerB = try await MosquittoFixture(
            extraConfiguration: MosquittoFixture.bridgeConfiguration(to: relay.port, topics: ["blebridge/#"]))
        let (recorderA, recorderB) = try await Self.recorders(brokerA, brokerB)
        let views = [View(recorder: recorderA), View(recorder: recorderB)]
        let members = try await Self.start(brokerA, brokerB, jitter: 2)
        // gw-d, on B, hears nothing: it dies during the cut, and its will must reach A at the heal.
        var silent = try Self.scenario("gw-d")
        silent.devices = []
        let gwD = try await Member(id: "gw-d", brokerURL: brokerB.url, scenario: silent, edit: Self.configure)
        #expect(await SharedBrokerEndToEndTests.record("gw-d", "online", on: recorderA) != nil)
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        func original(_ view: View) -> Bool {
            view.settled("hr_strap", on: "gw-a") && view.settled("lamp", on: "gw-b")
                && view.holders("bthome") == ["gw-b"]
        }
        let owned = await recorderA.wait(timeout: .seconds(40)) { _ in views.allSatisfy(original) }
        #expect(owned, "\(logs())")

        // The cut: each side goes on with what it last heard from the other, then elects its own.
        let cut = Date()
        relay.cut()
        func ms(_ instant: Date?, since: Date) -> String {
            instant.map { "\(Int($0.timeIntervalSince(since) * 1000)) ms" } ?? "never"
        }
        let split = await recorderA.wait(timeout: .seconds(50)) { _ in
            Self.took("gw-b", "hr_strap", on: recorderB, after: cut) != nil
                && Self.took("gw-a", "lamp", on: recorderA, after: cut) != nil
                && Self.took("gw-a", "bthome", on: recorderA, after: cut) != nil
        }
        let strapOnB = Self.took("gw-b", "hr_strap", on: recorderB, after: cut)
        let lampOnA = Self.took("gw-a", "lamp", on: recorderA, after: cut)
        let sensorOnA = Self.took("gw-a", "bthome", on: recorderA, after: cut)
        #expect(split, "strap on B \(ms(strapOnB, since: cut)), lamp on A \(ms(lampOnA, since: cut))\n\(logs())")
        // Nothing of one side reached the other while the bridge was cut.
        #expect(Self.took("gw-b", "hr_strap", on: recorderA, after: cut) == nil)
        #expect(Self.took("gw-a", "lamp", on: recorderB, after: cut) == nil)
        // Both sides publish the sensor now: gw-a's states on A, gw-b's on B.
        let bothPublish = await recorderA.wait(timeout: .seconds(10)) { _ in
            Self.states(on: recorderA, after: sensorOnA ?? cut).contains { $0.gateway == "gw-a" }
        }
        #expect(bothPublish, "\(Self.states(on: recorderA, after: cut).map(\.gateway))")
        // gw-d dies on B during the cut: its will stays on B for now.
        let killed = Date()
        gwD.gateway.process.signal(SIGKILL)
        await gwD.gateway.process.waitForExit()
        let willOnB = await SharedBrokerEndToEndTests.recordArrival(
            "gw-d", "offline", on: recorderB, after: killed, timeout: .seconds(10))
        #expect(willOnB != nil)
        #expect(SharedBrokerEndToEndTests.recordArrival("gw-d", "offline", on: recorderA, after: killed) == nil)

        // The heal: the bridge reconnects, the candidacies cross, one holder per device again.
        let healed = Date()
        relay.heal()
        let reconnected = try await Self.bridgeUp(from: recorderB, to: recorderA, "heal")
        let reconnectedAt = Date()
        #expect(reconnected, "the bridge did not come back: \(brokerB.standardError)")
        let merged = await recorderA.wait(timeout: .seconds(40)) { _ in views.allSatisfy(original) }
        let mergedAt = Date()
        // The sensor's states gw-b sampled during the cut (not retained) that reached A after the
        // heal: kept by the bridge's session with `cleansession false`, lost with `true`.
        let late = recorderA.arrivals(on: "blebridge/bthome").filter { $0.arrival > healed }.compactMap {
            entry -> Date? in
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            guard let json = recorderA.json(entry.message), let ts = (json["ts"] as? String).flatMap(format.date),
                let humidity = json["humidity"] as? NSNumber, Self.source(humidity.doubleValue) == "gw-b"
            else { return nil }
            return ts > cut && ts < healed ? ts : nil
        }
        // gw-d's will is retained on B: the reconnected bridge carries it to A (mosquitto subscribes
        // again on B at each bridge connection, whatever `cleansession`).
        let willOnA = await SharedBrokerEndToEndTests.recordArrival(
            "gw-d", "offline", on: recorderA, after: killed, timeout: .seconds(15))
        #expect(willOnA != nil, "gw-d's will never reached A: its record there still says online")
        let holdersNow = views.map {
            "strap \($0.holders("hr_strap")) lamp \($0.holders("lamp")) sensor \($0.holders("bthome"))"
        }
        #expect(merged, "\(holdersNow)\n\(logs())")
        print(
            "multi-gateway bridge partition: cut -> strap taken on B \(ms(strapOnB, since: cut)), lamp on A "
                + "\(ms(lampOnA, since: cut)), sensor published on A \(ms(sensorOnA, since: cut)); heal -> bridge "
                + "carries again \(ms(reconnectedAt, since: healed)), one holder per device on both brokers "
                + "\(ms(mergedAt, since: healed)), gw-d's will (during the cut) on A \(ms(willOnA, since: healed)), gw-b's states of the cut on A after the heal \(late.count); strap holders on A after the heal "
                + "\(views[0].holderHistory("hr_strap", after: healed)), on B \(views[1].holderHistory("hr_strap", after: healed)); "
                + "load \(MultiGatewayEndToEndTests.loadAverage())")

        for member in members.values + [gwD] { await member.stop() }
        await recorderA.close()
        await recorderB.close()
        await brokerB.stop()
        relay.stop()
        await brokerA.stop()
    }
}
