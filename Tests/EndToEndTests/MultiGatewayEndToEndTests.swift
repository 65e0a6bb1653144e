import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Issue 21 with real parts: three `blebridge run` processes in shared-broker mode, each on its
/// own private bus with its own simulated adapter, one real mosquitto. Every adapter hears the
/// same two connected devices (the demo's heart-rate strap and lamp), each at its own RSSI (set
/// in each simulator's scenario): the strap is nearest gw-a, the lamp nearest gw-b.
/// docs/multi-gateway.md, "Ownership of connected devices".
@Suite(.serialized) struct MultiGatewayEndToEndTests {
    typealias Member = SharedBrokerEndToEndTests.Member
    static let gateways = "blebridge/bridge/gateways/"
    static let devices = ["hr_strap", "lamp"]
    /// dBm per gateway and device.
    static let rssi: [String: [String: Int16]] = [
        "gw-a": ["hr_strap": -50, "lamp": -74],
        "gw-b": ["hr_strap": -62, "lamp": -52],
        "gw-c": ["hr_strap": -75, "lamp": -80],
    ]

    /// The demo's strap and lamp, at `id`'s RSSI.
    static func scenario(_ id: String) throws -> Scenario {
        var scenario = try Scenario.load("demo")
        scenario.devices = scenario.devices.filter { devices.contains($0.id) }
        for index in scenario.devices.indices {
            scenario.devices[index].rssi = rssi[id]?[scenario.devices[index].id] ?? -90
            scenario.devices[index].rssiJitter = 0
        }
        return scenario
    }

    /// The sample configuration with only the strap and the lamp, raw GATT on (its allowlist has
    /// the lamp's brightness), and a 3 s connect timeout: a
    /// command a gateway accepted for a device it cannot connect is answered (`device_unavailable`)
    /// after it plus 5 s, well before the test ends, so an answer from a standby would be seen.
    static func configure(_ configuration: inout [String: Any]) {
        let configured = configuration["devices"] as? [[String: Any]] ?? []
        configuration["devices"] = configured.filter { devices.contains($0["id"] as? String ?? "") }
        var bluetooth = configuration["bluetooth"] as? [String: Any] ?? [:]
        bluetooth["connect_timeout"] = "3s"
        configuration["bluetooth"] = bluetooth
        // The sample's raw GATT allowlist (the lamp's brightness), for the bridge request test.
        var commands = configuration["commands"] as? [String: Any] ?? [:]
        var raw = commands["raw_gatt"] as? [String: Any] ?? [:]
        raw["enabled"] = true
        commands["raw_gatt"] = raw
        configuration["commands"] = commands
    }

    /// What the recorder saw of the installation.
    struct View {
        let recorder: MQTTRecorder

        /// The gateways whose record says online (as the gateways count them).
        func online() -> Set<String> {
            Set(
                rssi.keys.filter { id in
                    recorder.on(gateways + id).last.flatMap(recorder.json)?["state"] as? String == "online"
                })
        }

        /// The online gateways whose last candidacy for `device` says they hold it.
        func holders(_ device: String) -> Set<String> {
            var latest: [String: Bool] = [:]
            for message in recorder.all where message.topic.hasSuffix("/candidacy/\(device)") {
                guard let gateway = gateway(of: message.topic) else { continue }
                latest[gateway] = recorder.json(message)?["holding"] as? Bool ?? false
            }
            return Set(latest.filter(\.value).keys).intersection(online())
        }

        /// The gateways whose last `devices` list says `device` is connected.
        func connected(_ device: String) -> Set<String> {
            var result: Set<String> = []
            for id in online() {
                guard let last = recorder.on(gateways + id + "/devices").last,
                    let list = (try? JSONSerialization.jsonObject(with: Data(last.payload))) as? [[String: Any]]
                else { continue }
                if list.contains(where: { $0["id"] as? String == device && $0["connected"] as? Bool == true }) {
                    result.insert(id)
                }
            }
            return result
        }

        /// The holder sets of `device` (online gateways only) in the order they changed, from the
        /// candidacies and records arriving after `after`. With `changesOnly`, the holders before
        /// `after` are the starting point: a first message after it that changes nothing (one sent
        /// before a SIGKILL and still in flight, a standby's unchanged candidacy) adds no entry.
        func holderHistory(_ device: String, after: Date, changesOnly: Bool = false) -> [Set<String>] {
            var latest: [String: Bool] = [:]
            var up: [String: Bool] = [:]
            var history: [Set<String>] = []
            var before: Set<String>?
            for (message, arrival) in recorder.arrivals(matching: { $0.hasPrefix(gateways) }) {
                guard let gateway = gateway(of: message.topic) else { continue }
                if message.topic == gateways + gateway {
                    up[gateway] = recorder.json(message)?["state"] as? String == "online"
                } else if message.topic.hasSuffix("/candidacy/\(device)") {
                    latest[gateway] = recorder.json(message)?["holding"] as? Bool ?? false
                } else {
                    continue
                }
                let holders = Set(latest.filter { $0.value && up[$0.key] == true }.keys)
                guard arrival > after else {
                    before = holders
                    continue
                }
                if holders != (history.last ?? (changesOnly ? before : nil)) { history.append(holders) }
            }
            return history
        }

        func gateway(of topic: String) -> String? {
            topic.dropFirst(gateways.count).split(separator: "/").first.map(String.init)
        }

        /// The Home Assistant config topics of `device` under any node (`<scope>_<device>`), each
        /// with its last payload as JSON (what the broker retains); deleted ones (empty) left out.
        func configs(_ device: String) -> [String: [String: Any]] {
            var result: [String: [String: Any]] = [:]
            for message in recorder.all where node(of: message.topic)?.hasSuffix("_" + device) == true {
                result[message.topic] = message.payload.isEmpty ? nil : recorder.json(message)
            }
            return result
        }

        /// `homeassistant/<component>/<node>/<object>/config` → `<node>`.
        func node(of topic: String) -> String? {
            let levels = topic.split(separator: "/")
            guard levels.count == 5, levels[0] == "homeassistant", levels[4] == "config" else { return nil }
            return String(levels[2])
        }

        /// The `via_device` of every retained config of `device`.
        func via(_ device: String) -> Set<String> {
            Set(configs(device).values.compactMap { ($0["device"] as? [String: Any])?["via_device"] as? String })
        }

        /// Every retained config of `device` names `owner`'s bridge, and there is one for `field` at least.
        func announced(_ device: String, by owner: String, with field: String) -> Bool {
            via(device) == ["\(owner)_bridge"] && configs(device).keys.contains { $0.hasSuffix("/\(field)/config") }
        }

        /// `owner` announced `device` (its `field` config names `owner`'s bridge), while another
        /// gateway's announcement may still be retained for a moment: one sent by a gateway that
        /// owned the device for a moment at the start can reach the broker after the owner's, which
        /// then announces it again (docs/multi-gateway.md, "Home Assistant: one device").
        func announcedToo(_ device: String, by owner: String, with field: String) -> Bool {
            configs(device).contains {
                $0.key.hasSuffix("/\(field)/config")
                    && ($0.value["device"] as? [String: Any])?["via_device"] as? String == "\(owner)_bridge"
            }
        }

        /// Exactly `owner` holds `device` and is connected to it.
        func settled(_ device: String, on owner: String) -> Bool {
            holders(device) == [owner] && connected(device) == [owner]
        }
    }

    @Test func oneOwnerPerDeviceFailoverAfterSIGKILLAndAHandBackWithoutFlapping() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        try await recorder.subscribe("homeassistant/#")
        let view = View(recorder: recorder)
        let members = try await MultiGatewayEndToEndTests.start(broker, scenario: Self.scenario, edit: Self.configure)
        func logs() -> String { MultiGatewayEndToEndTests.logs(members) }
        let started = Date()
        // One owner per device: the nearest gateway holds it and is the only one connected.
        let owned = await recorder.wait(timeout: .seconds(40)) { _ in
            view.settled("hr_strap", on: "gw-a") && view.settled("lamp", on: "gw-b")
        }
        let state =
            "holders strap \(view.holders("hr_strap")) lamp \(view.holders("lamp")), connected strap "
            + "\(view.connected("hr_strap")) lamp \(view.connected("lamp"))"
        #expect(owned, "\(state)\n\(logs())")
        print("multi-gateway: owners settled \(Int(Date().timeIntervalSince(started) * 1000)) ms after the start")

        // Home Assistant sees one device per BLE device: one retained config per entity, under
        // ids without a gateway id, announced by the owner alone (`via_device` its bridge).
        let announcedByOwners = await recorder.wait(timeout: .seconds(30)) { _ in
            view.announcedToo("hr_strap", by: "gw-a", with: "heart_rate")
                && view.announcedToo("lamp", by: "gw-b", with: "power")
        }
        #expect(announcedByOwners, "strap via \(view.via("hr_strap")), lamp via \(view.via("lamp"))")
        for device in Self.devices {
            let configs = view.configs(device)
            #expect(Set(configs.keys.compactMap(view.node)) == ["blebridge_\(device)"], "\(configs.keys.sorted())")
            let uniqueIDs = configs.values.compactMap { $0["unique_id"] as? String }
            #expect(uniqueIDs.count == configs.count && Set(uniqueIDs).count == uniqueIDs.count, "\(uniqueIDs)")
            #expect(
                uniqueIDs.allSatisfy { $0.hasPrefix("blebridge_\(device)_") && !$0.contains("gw-") }, "\(uniqueIDs)")
        }

        // A command for the lamp is answered once, by its owner (the others stay silent).
        let response = "blebridge/bridge/response/lamp/set"
        let commandsSent = Date()
        try await recorder.publish("blebridge/lamp/set", #"{"brightness":55,"transaction":"t-1"}"#)
        try await recorder.publish("blebridge/lamp/set", #"{"brightness":56,"transaction":"t-2"}"#)
        _ = await recorder.first(on: response, timeout: .seconds(30)) {
            recorder.json($0)?["transaction"] as? String == "t-2"
        }
        let answers = recorder.on(response).compactMap { recorder.json($0) }
        #expect(answers.filter { $0["transaction"] as? String == "t-1" }.count == 1, "\(answers)")
        #expect(answers.allSatisfy { $0["status"] as? String == "ok" }, "\(answers)")
        // Bridge requests on the shared topic are answered once: a device's by its owner (gw-b
        // for the lamp), the gateway's own by the speaker (gw-a, the smallest id); a request for a
        // device nobody knows by the speaker alone; each gateway answers on its own topic too.
        try await recorder.publish("blebridge/bridge/request/devices", #"{"transaction":"d-1"}"#)
        try await recorder.publish(
            "blebridge/bridge/request/gatt/read",
            #"{"device":"lamp","characteristic":"6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b","transaction":"g-1"}"#)
        try await recorder.publish("blebridge/bridge/request/connect", #"{"device":"nobody","transaction":"u-1"}"#)
        try await recorder.publish("blebridge/bridge/gateways/gw-c/request/devices", #"{"transaction":"c-1"}"#)
        _ = await recorder.first(on: "blebridge/bridge/gateways/gw-c/response/devices", timeout: .seconds(20)) {
            recorder.json($0)?["transaction"] as? String == "c-1"
        }
        func requestAnswers(_ topic: String, _ transaction: String) -> [[String: Any]] {
            recorder.on(topic).compactMap { recorder.json($0) }.filter { $0["transaction"] as? String == transaction }
        }
        _ = await recorder.wait(timeout: .seconds(20)) { _ in
            !requestAnswers("blebridge/bridge/response/gatt/read", "g-1").isEmpty
                && !requestAnswers("blebridge/bridge/response/devices", "d-1").isEmpty
                && !requestAnswers("blebridge/bridge/response/connect", "u-1").isEmpty
        }
        let requestsSent = Date()
        let brightness = try await members["gw-b"]!.simulator.characteristicValue(
            address: "C0:FF:EE:00:00:05", uuid: "6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
        #expect(brightness == [56])

        // SIGKILL of the strap's owner: its will, then the best standby (gw-b) takes the strap.
        let killed = Date()
        members["gw-a"]!.gateway.process.signal(SIGKILL)
        await members["gw-a"]!.gateway.process.waitForExit()
        let will = await SharedBrokerEndToEndTests.recordArrival(
            "gw-a", "offline", on: recorder, after: killed, timeout: .seconds(10))
        #expect(will != nil, "no will of gw-a")
        // Everything gw-a sent reached the recorder before its will: a state after the will is a standby's.
        let resumed = await SharedBrokerEndToEndTests.readingsResume(
            on: recorder, topic: "blebridge/hr_strap", afterTheWillOf: "gw-a", killedAt: killed)
        let resumedMs = resumed.map { Int($0.timeIntervalSince(killed) * 1000) }
        #expect(resumed != nil, "no strap reading within 15 s (of this process's time) after the SIGKILL\n\(logs())")
        let failedOver = await recorder.wait(timeout: .seconds(20)) { _ in view.settled("hr_strap", on: "gw-b") }
        #expect(
            failedOver, "strap holders \(view.holders("hr_strap")) connected \(view.connected("hr_strap"))\n\(logs())")
        // The lamp stayed where it was.
        #expect(view.settled("lamp", on: "gw-b"))
        // The new owner announced the strap again: every config names gw-b's bridge (the same topics).
        let reannounced = await recorder.wait(timeout: .seconds(20)) { _ in
            view.announced("hr_strap", by: "gw-b", with: "heart_rate")
        }
        #expect(reannounced, "strap via \(view.via("hr_strap"))\n\(logs())")
        func announcedAfter(_ instant: Date, by owner: String) -> (first: Date, last: Date)? {
            let arrivals = recorder.arrivals(matching: { view.node(of: $0) == "blebridge_hr_strap" }).filter {
                $0.arrival > instant
                    && (recorder.json($0.message)?["device"] as? [String: Any])?["via_device"] as? String
                        == "\(owner)_bridge"
            }.map(\.arrival)
            guard let first = arrivals.first, let last = arrivals.last else { return nil }
            return (first, last)
        }
        let reannouncedAt = announcedAfter(killed, by: "gw-b")
        let reannouncedMs = reannouncedAt.map {
            "\(Int($0.first.timeIntervalSince(killed) * 1000))-\(Int($0.last.timeIntervalSince(killed) * 1000)) ms"
        }
        #expect(view.announcedToo("lamp", by: "gw-b", with: "power"), "lamp via \(view.via("lamp"))")

        // gw-a returns (same configuration and outbox): it hears the strap 12 dB better than
        // gw-b, so after the switch delay (10 s) gw-b releases the strap and gw-a takes it back.
        let restarted = Date()
        let again = try GatewayProcess(restarting: members["gw-a"]!.gateway)
        let handedBack = await recorder.wait(timeout: .seconds(40)) { _ in
            view.settled("hr_strap", on: "gw-a") && view.holderHistory("hr_strap", after: restarted).last == ["gw-a"]
        }
        let backMs = Int(Date().timeIntervalSince(restarted) * 1000)
        #expect(
            handedBack,
            "strap holders \(view.holders("hr_strap")) connected \(view.connected("hr_strap"))\n\(again.log.suffix(3000))"
        )
        // Back on gw-a, it announces the strap again; at the end every config of every device
        // names its owner (an announcement of a former owner that reached the broker late, at
        // the start or during a hand-over, is announced again by the owner).
        let announcedBack = await recorder.wait(timeout: .seconds(30)) { _ in
            view.announced("hr_strap", by: "gw-a", with: "heart_rate")
                && view.announced("lamp", by: "gw-b", with: "power")
        }
        #expect(announcedBack, "strap via \(view.via("hr_strap")), lamp via \(view.via("lamp"))\n\(logs())")
        // Never a config under a gateway's id, never a deleted one, for either device.
        let perGateway = recorder.all.filter { message in
            Self.devices.contains { view.node(of: message.topic)?.hasSuffix("_\($0)") == true }
                && (view.node(of: message.topic)?.hasPrefix("blebridge_") != true || message.payload.isEmpty)
        }
        #expect(perGateway.isEmpty, "\(perGateway.map(\.topic))")
        // No flapping: from the SIGKILL on, the strap went to gw-b, then (released first) to gw-a, once.
        let history = view.holderHistory("hr_strap", after: killed, changesOnly: true)
        #expect(history == [[], ["gw-b"], [], ["gw-a"]] || history == [["gw-b"], [], ["gw-a"]], "\(history)")
        #expect(view.holderHistory("lamp", after: started).allSatisfy { $0.count <= 1 })
        // Still one answer per lamp command, more than the 8 s a standby that accepted one would
        // have taken to answer it.
        let finalAnswers = recorder.on(response).compactMap { recorder.json($0) }
        #expect(finalAnswers.count == 2, "\(finalAnswers)")
        // Each bridge request above was answered exactly once (seconds later, a second answer from
        // another gateway would have come long since).
        #expect(Date().timeIntervalSince(requestsSent) > 8)
        let read = requestAnswers("blebridge/bridge/response/gatt/read", "g-1")
        #expect(read.count == 1 && read.first?["status"] as? String == "ok", "\(read)")
        let listed = requestAnswers("blebridge/bridge/response/devices", "d-1")
        #expect(listed.count == 1, "\(listed)")
        let unknown = requestAnswers("blebridge/bridge/response/connect", "u-1")
        #expect(
            unknown.count == 1 && (unknown.first?["error"] as? [String: Any])?["code"] as? String == "unknown_device",
            "\(unknown)")
        // Not seen once in a full run under load (load 6-11, no log kept): the answers and gw-c's log say why next time.
        let ownTopic = requestAnswers("blebridge/bridge/gateways/gw-c/response/devices", "c-1")
        #expect(ownTopic.count == 1, "\(ownTopic)\ngw-c: \(members["gw-c"]!.gateway.log.suffix(4000))")
        #expect(Date().timeIntervalSince(commandsSent) > 8)
        print(
            "multi-gateway: SIGKILL -> will \(will.map { "\(Int($0.timeIntervalSince(killed) * 1000)) ms" } ?? "never"), "
                + "strap readings resumed on gw-b \(resumedMs.map { "\($0) ms" } ?? "never"), strap configs via gw-b "
                + "\(reannouncedMs ?? "never"); restart -> "
                + "strap back on gw-a \(backMs) ms; strap holders \(history); bridges named by the configs: strap "
                + "\(view.via("hr_strap").sorted()), lamp \(view.via("lamp").sorted()); load \(Self.loadAverage())")

        again.process.signal(SIGTERM)
        await again.process.waitForExit(timeout: .seconds(15))
        for member in members.values { await member.stop() }
        await recorder.close()
        await broker.stop()
    }

    /// gw-a, gw-b and gw-c on `broker`, each on its own bus with its own simulator running `scenario(id)`.
    static func start(
        _ broker: MosquittoFixture, scenario: (String) throws -> Scenario, edit: (inout [String: Any]) -> Void
    ) async throws -> [String: Member] {
        var members: [String: Member] = [:]
        for id in ["gw-a", "gw-b", "gw-c"] {
            members[id] = try await Member(id: id, brokerURL: broker.url, scenario: try scenario(id), edit: edit)
        }
        return members
    }

    /// The end of every member's log, for a failure message.
    static func logs(_ members: [String: Member]) -> String {
        members.keys.sorted().map { "\($0): \(members[$0]!.gateway.log.suffix(1500))" }.joined(separator: "\n")
    }

    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
    }
}
