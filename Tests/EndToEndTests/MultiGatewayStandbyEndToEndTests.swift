import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 21's two late defects, with real parts (`blebridge run` processes, each on its own
/// private bus and simulated adapter, one mosquitto): a standby's candidacy for a steady strap,
/// and a Home Assistant config left naming another gateway's bridge
/// (docs/multi-gateway.md, "Candidacies" and "Home Assistant: one device").
@Suite(.serialized) struct MultiGatewayStandbyEndToEndTests {
    typealias Member = SharedBrokerEndToEndTests.Member
    static let gateways = "blebridge/bridge/gateways/"
    static let strap = "C0:FF:EE:00:00:01"
    static let rssi: [String: Int16] = ["gw-a": -50, "gw-b": -62, "gw-c": -75]

    /// The demo's strap alone, at `id`'s RSSI, without jitter: it advertises service UUIDs and a
    /// name, no manufacturer or service data, at an RSSI that never changes, so bluetoothd reports
    /// it once and never signals it again while it advertises.
    static func scenario(_ id: String) throws -> Scenario {
        var scenario = try Scenario.load("demo")
        scenario.devices = scenario.devices.filter { $0.id == "hr_strap" }
        scenario.devices[0].rssi = rssi[id] ?? -90
        scenario.devices[0].rssiJitter = 0
        return scenario
    }

    static func configure(_ configuration: inout [String: Any]) {
        let configured = configuration["devices"] as? [[String: Any]] ?? []
        configuration["devices"] = configured.filter { $0["id"] as? String == "hr_strap" }
        // The sample's raw GATT allowlist names the lamp, which is left out here.
        var commands = configuration["commands"] as? [String: Any] ?? [:]
        commands["raw_gatt"] = nil
        configuration["commands"] = commands
    }

    /// `gateway`'s last candidacy for the strap as the recorder saw it: nil before any, `.some(nil)` withdrawn.
    static func candidacy(_ gateway: String, _ recorder: MQTTRecorder) -> [String: Any]?? {
        guard let last = recorder.on(gateways + gateway + "/candidacy/hr_strap").last else { return nil }
        return .some(last.payload.isEmpty ? nil : recorder.json(last))
    }

    /// A standby that heard the steady strap once keeps its candidacy while its BlueZ keeps the
    /// strap's object (bluetoothd removes it only once the strap has not advertised for 30 s), so
    /// the owner's SIGKILL long after the start still fails over; a standby whose strap stopped
    /// advertising withdraws once its BlueZ removed the object. Before the fix every standby's
    /// candidacy ended 30 s after its only report, and the strap was left unowned.
    @Test func aStandbyKeepsItsCandidacyForASteadyStrapAndTakesItAtTheOwnersLateSIGKILL() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let started = Date()
        // gw-a first, holding the strap before the others start: no standby ever connects it (a
        // link makes bluetoothd keep the object for good, and its presence then says nothing).
        var members: [String: Member] = [:]
        members["gw-a"] = try await Member(
            id: "gw-a", brokerURL: broker.url, scenario: try Self.scenario("gw-a"), edit: Self.configure)
        let held = await recorder.wait(timeout: .seconds(40)) { _ in
            Self.candidacy("gw-a", recorder)??["holding"] as? Bool == true
        }
        #expect(held, "gw-a never held the strap\n\(members["gw-a"]!.gateway.log.suffix(3000))")
        for id in ["gw-b", "gw-c"] {
            members[id] = try await Member(
                id: id, brokerURL: broker.url, scenario: try Self.scenario(id), edit: Self.configure)
        }
        func logs() -> String {
            members.keys.sorted().map { "\($0): \(members[$0]!.gateway.log.suffix(2000))" }.joined(separator: "\n")
        }
        let standbys = await recorder.wait(timeout: .seconds(40)) { _ in
            ["gw-b", "gw-c"].allSatisfy { Self.candidacy($0, recorder)??["holding"] as? Bool == false }
        }
        #expect(standbys, "\(logs())")
        // gw-c's strap stops advertising: its BlueZ removes the object 30 s later, and gw-c withdraws.
        let silenced = Date()
        try await members["gw-c"]!.simulator.setDeviceInRange(address: Self.strap, false)
        let withdrawn = await recorder.wait(timeout: .seconds(90)) { _ in
            if case .some(nil) = Self.candidacy("gw-c", recorder) { return true }
            return false
        }
        let withdrawnAt = recorder.arrivals(on: Self.gateways + "gw-c/candidacy/hr_strap").last?.arrival ?? Date()
        #expect(withdrawn, "gw-c kept its candidacy for a strap gone\n\(logs())")
        // By now gw-b last heard its strap more than 30 s ago (reported once, at its start); its
        // candidacy still stands, renewed after gw-c's withdrawal.
        let renewed = await recorder.wait(timeout: .seconds(25)) { _ in
            recorder.arrivals(on: Self.gateways + "gw-b/candidacy/hr_strap").contains { $0.arrival > withdrawnAt }
        }
        let standing = recorder.arrivals(on: Self.gateways + "gw-b/candidacy/hr_strap").filter {
            $0.arrival > withdrawnAt
        }
        #expect(renewed && standing.allSatisfy { !$0.message.payload.isEmpty }, "\(logs())")
        // SIGKILL of gw-a, long after every standby's only report: gw-b takes the strap.
        let killed = Date()
        members["gw-a"]!.gateway.process.signal(SIGKILL)
        await members["gw-a"]!.gateway.process.waitForExit()
        let failedOver = await recorder.wait(timeout: .seconds(15)) { _ in
            Self.candidacy("gw-b", recorder)??["holding"] as? Bool == true
                && recorder.arrivals(on: "blebridge/hr_strap").contains { $0.arrival > killed }
        }
        #expect(failedOver, "gw-b did not take the strap\n\(logs())")
        let resumed = recorder.arrivals(on: "blebridge/hr_strap").first { $0.arrival > killed }?.arrival
        print(
            "multi-gateway standby: SIGKILL \(Int(killed.timeIntervalSince(started))) s after the start; "
                + "gw-c withdrew \(Int(withdrawnAt.timeIntervalSince(silenced) * 1000)) ms after its strap went "
                + "silent; strap readings from gw-b \(resumed.map { "\(Int($0.timeIntervalSince(killed) * 1000)) ms" } ?? "never") "
                + "after the SIGKILL; load \(MultiGatewayEndToEndTests.loadAverage())")
        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }

    /// An owner frozen with SIGSTOP (as a power cut or a lost network: no FIN) with the default
    /// 30 s keepalive: its will would come 45 s after its last packet, but its candidacy, no longer
    /// renewed every 10 s, goes stale 30 s after it was last received, and the standby takes the
    /// strap then. At SIGCONT the two holders meet and one keeps it.
    @Test func aFrozenOwnerLosesTheStrapWhenItsCandidacyGoesStaleBeforeItsWill() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        var members: [String: Member] = [:]
        members["gw-a"] = try await Member(
            id: "gw-a", brokerURL: broker.url, keepalive: "30s", scenario: try Self.scenario("gw-a"),
            edit: Self.configure)
        let held = await recorder.wait(timeout: .seconds(40)) { _ in
            Self.candidacy("gw-a", recorder)??["holding"] as? Bool == true
        }
        #expect(held, "gw-a never held the strap\n\(members["gw-a"]!.gateway.log.suffix(3000))")
        members["gw-b"] = try await Member(
            id: "gw-b", brokerURL: broker.url, keepalive: "30s", scenario: try Self.scenario("gw-b"),
            edit: Self.configure)
        func logs() -> String {
            members.keys.sorted().map { "\($0): \(members[$0]!.gateway.log.suffix(2000))" }.joined(separator: "\n")
        }
        let standby = await recorder.wait(timeout: .seconds(40)) { _ in
            Self.candidacy("gw-b", recorder)??["holding"] as? Bool == false
        }
        #expect(standby, "\(logs())")
        let frozen = Date()
        members["gw-a"]!.gateway.process.signal(SIGSTOP)
        let lastRenewal = recorder.arrivals(on: Self.gateways + "gw-a/candidacy/hr_strap").last?.arrival ?? frozen
        let tookOver = await recorder.wait(timeout: .seconds(45)) { _ in
            Self.candidacy("gw-b", recorder)??["holding"] as? Bool == true
                && recorder.arrivals(on: "blebridge/hr_strap").contains { $0.arrival > frozen }
        }
        let takenAt = recorder.arrivals(on: Self.gateways + "gw-b/candidacy/hr_strap").first {
            $0.arrival > frozen && recorder.json($0.message)?["holding"] as? Bool == true
        }?.arrival
        let will = recorder.arrivals(on: Self.gateways + "gw-a").first {
            $0.arrival > frozen && recorder.json($0.message)?["state"] as? String == "offline"
        }?.arrival
        #expect(tookOver, "\(logs())")
        // Taken by the candidacy's lifetime, before any will.
        #expect(will == nil || (takenAt ?? .distantFuture) < will!, "will \(String(describing: will))")
        #expect((takenAt?.timeIntervalSince(lastRenewal) ?? .infinity) < 35)
        // SIGCONT: gw-a still holds its link and says so; of the two holders one keeps the strap.
        let resumed = Date()
        members["gw-a"]!.gateway.process.signal(SIGCONT)
        let one = await recorder.wait(timeout: .seconds(30)) { _ in
            let holders = ["gw-a", "gw-b"].filter { Self.candidacy($0, recorder)??["holding"] as? Bool == true }
            return holders.count == 1
                && recorder.arrivals(on: Self.gateways + "gw-a/candidacy/hr_strap").contains { $0.arrival > resumed }
        }
        #expect(one, "\(logs())")
        func ms(_ date: Date?, since: Date) -> String {
            date.map { "\(Int($0.timeIntervalSince(since) * 1000)) ms" } ?? "never"
        }
        print(
            "multi-gateway frozen owner: SIGSTOP -> gw-b holds \(ms(takenAt, since: frozen)) (\(ms(takenAt, since: lastRenewal)) "
                + "after gw-a's last candidacy), will \(ms(will, since: frozen)); load \(MultiGatewayEndToEndTests.loadAverage())"
        )
        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }

    /// A retained config of the owner's device that names another gateway's bridge (what a
    /// former owner's late announcement leaves) is announced again by the owner, naming its
    /// own bridge. Before the fix it stayed until the next announcement.
    @Test func aConfigNamingAnotherBridgeIsAnnouncedAgainByTheOwner() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        try await recorder.subscribe("homeassistant/#")
        let member = try await Member(
            id: "gw-a", brokerURL: broker.url, scenario: try Self.scenario("gw-a"), edit: Self.configure)
        func via(_ message: MQTTMessage) -> String? {
            (recorder.json(message)?["device"] as? [String: Any])?["via_device"] as? String
        }
        // The owner's config of the strap's heart rate.
        _ = await recorder.wait(timeout: .seconds(40)) { messages in
            messages.contains {
                $0.topic.hasSuffix("/blebridge_hr_strap/heart_rate/config") && via($0) == "gw-a_bridge"
            }
        }
        let announced = recorder.all.first {
            $0.topic.hasSuffix("/blebridge_hr_strap/heart_rate/config") && via($0) == "gw-a_bridge"
        }
        #expect(announced != nil, "\(member.gateway.log.suffix(3000))")
        guard let announced, var payload = recorder.json(announced) else { return }
        let topic = announced.topic
        // gw-z's announcement of the same entity, from when it owned the strap, arrives late.
        var device = payload["device"] as? [String: Any] ?? [:]
        device["via_device"] = "gw-z_bridge"
        payload["device"] = device
        let stale = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        let sent = Date()
        try await recorder.publish(topic, stale, retain: true)
        let repaired = await recorder.wait(timeout: .seconds(15)) { _ in
            recorder.arrivals(on: topic).last.map { $0.arrival > sent && via($0.message) == "gw-a_bridge" } ?? false
        }
        let arrivals = recorder.arrivals(on: topic).filter { $0.arrival > sent }
        #expect(repaired, "\(arrivals.map { via($0.message) ?? "-" })\n\(member.gateway.log.suffix(3000))")
        // Once: the owner's own echo settles it (no loop on it).
        let settled = await recorder.wait(timeout: .seconds(3)) { _ in false }
        #expect(!settled)
        let after = recorder.arrivals(on: topic).filter { $0.arrival > sent }.map { via($0.message) ?? "-" }
        #expect(after == ["gw-z_bridge", "gw-a_bridge"], "\(after)")
        let repairMs = arrivals.dropFirst().first.map { Int($0.arrival.timeIntervalSince(sent) * 1000) }
        print(
            "multi-gateway via_device: stale config repaired \(repairMs.map { "\($0) ms" } ?? "never") after it was "
                + "published; load \(MultiGatewayEndToEndTests.loadAverage())")
        await member.stop()
        await recorder.close()
        await broker.stop()
    }
}
