import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// Shared-broker mode with real parts: two `blebridge run` processes, each on its own private bus
/// with its own simulated adapter, one real mosquitto, one base topic (docs/multi-gateway.md).
@Suite(.serialized) struct SharedBrokerEndToEndTests {
    /// One gateway of the pair: its bus, its simulator, its process.
    struct Member {
        let bus: DBusDaemonFixture
        let simulator: BlueZSimulator
        let gateway: GatewayProcess

        /// `scenario`: the demo unless given; `edit` changes the configuration further.
        init(
            id: String, brokerURL: String, keepalive: String? = nil, scenario: Scenario? = nil,
            healthInterval: String = "30s", edit: (inout [String: Any]) -> Void = { _ in }
        ) async throws {
            bus = try await DBusDaemonFixture()
            simulator = BlueZSimulator(
                scenario: try scenario ?? Scenario.load("demo"),
                options: BlueZSimulator.Options(disconnectDelay: .milliseconds(100)))
            try await simulator.start(busAddress: bus.address)
            gateway = try GatewayProcess(brokerURL: brokerURL, busAddress: bus.address, healthInterval: healthInterval)
            {
                configuration in
                configuration["gateway_id"] = id
                var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
                mqtt["shared_broker"] = true
                // The sample names its client id; two gateways with one id take turns on the broker.
                mqtt["client_id"] = nil
                if let keepalive { mqtt["keepalive"] = keepalive }
                configuration["mqtt"] = mqtt
                edit(&configuration)
            }
        }

        func stop() async {
            if gateway.process.isRunning {
                gateway.process.signal(SIGTERM)
                await gateway.process.waitForExit(timeout: .seconds(15))
            }
            await simulator.stop()
            await bus.stop()
        }
    }

    static let records = "blebridge/bridge/gateways/"

    /// The first record of `id` in `state`, as JSON.
    static func record(_ id: String, _ state: String, on recorder: MQTTRecorder) async -> [String: Any]? {
        let message = await recorder.first(on: records + id, timeout: .seconds(30)) {
            recorder.json($0)?["state"] as? String == state
        }
        return message.flatMap(recorder.json)
    }

    /// The first health message of `observer` listing `peer` in `state` (after `after`, when given).
    static func sees(
        _ observer: String, _ peer: String, _ state: String, on recorder: MQTTRecorder,
        timeout: Duration = .seconds(30), after: Date = .distantPast
    ) async -> (message: MQTTMessage, arrival: Date)? {
        let topic = records + observer + "/health"
        func match() -> (message: MQTTMessage, arrival: Date)? {
            recorder.arrivals(on: topic).first { entry in
                guard entry.arrival > after else { return false }
                let gateways = recorder.json(entry.message)?["gateways"] as? [[String: Any]] ?? []
                return gateways.contains { $0["id"] as? String == peer && $0["state"] as? String == state }
            }
        }
        await recorder.wait(timeout: timeout) { _ in match() != nil }
        return match()
    }

    /// The first record of `id` in `state` that arrived after `after`.
    static func recordArrival(
        _ id: String, _ state: String, on recorder: MQTTRecorder, after: Date, timeout: Duration
    ) async -> Date? {
        await recorder.wait(timeout: timeout) { _ in recordArrival(id, state, on: recorder, after: after) != nil }
        return recordArrival(id, state, on: recorder, after: after)
    }

    /// The failover goal (docs/multi-gateway.md: 15 s from the owner's SIGKILL to the standby's
    /// readings), waited for in time this process could run, as every wait here counts it: each
    /// gateway's simulated bluetoothd (which the standby asks to connect the device and which sends
    /// its readings) and the recorders live in this process. With this process stopped for 16 s
    /// right after the SIGKILL, a wall-clock bound failed (readings 16.3 s after it; 15.9 s in a
    /// loaded full run). Returns when the first message on `topic` after `id`'s will arrived.
    static func readingsResume(
        on recorder: MQTTRecorder, topic: String, afterTheWillOf id: String, killedAt killed: Date
    ) async -> Date? {
        func reading() -> Date? {
            recordArrival(id, "offline", on: recorder, after: killed).flatMap { will in
                recorder.arrivals(on: topic).first { $0.arrival > will }?.arrival
            }
        }
        _ = await recorder.wait(timeout: .seconds(15)) { _ in reading() != nil }
        return reading()
    }

    /// The first record of `id` in `state` that has arrived after `after`, without waiting.
    static func recordArrival(_ id: String, _ state: String, on recorder: MQTTRecorder, after: Date) -> Date? {
        recorder.arrivals(on: records + id).first {
            $0.arrival > after && recorder.json($0.message)?["state"] as? String == state
        }?.arrival
    }

    @Test func twoGatewaysSeeEachOtherAndTheSurvivorSeesTheWillOfAKilledOne() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/#")
        let a = try await Member(id: "gw-a", brokerURL: broker.url)
        let b = try await Member(id: "gw-b", brokerURL: broker.url)
        let records = Self.records
        func record(_ id: String, _ state: String) async -> [String: Any]? {
            await Self.record(id, state, on: recorder)
        }
        func sees(_ observer: String, _ peer: String, _ state: String, timeout: Duration = .seconds(30)) async
            -> MQTTMessage?
        {
            await Self.sees(observer, peer, state, on: recorder, timeout: timeout)?.message
        }
        let recordA = await record("gw-a", "online")
        let recordB = await record("gw-b", "online")
        #expect(recordA != nil, "no online record of gw-a; log: \(a.gateway.log.suffix(2000))")
        #expect(recordB != nil, "no online record of gw-b; log: \(b.gateway.log.suffix(2000))")
        for (record, id) in [(recordA, "gw-a"), (recordB, "gw-b")] {
            #expect(record?["gateway_id"] as? String == id)
            #expect(record?["version"] is String)
            #expect(record?["adapter"] as? String == "hci0")
            #expect(record?["free_slots"] is Int)
            #expect(record?["load"] is [String: Any])
        }
        // Each sees the other in its health.
        #expect(await sees("gw-a", "gw-b", "online") != nil, "gw-a never saw gw-b; log: \(a.gateway.log.suffix(2000))")
        #expect(await sees("gw-b", "gw-a", "online") != nil, "gw-b never saw gw-a; log: \(b.gateway.log.suffix(2000))")
        // The moved topics are per gateway; the single-gateway ones stay empty.
        #expect(await recorder.first(on: records + "gw-a/info", timeout: .seconds(10)) != nil)
        #expect(await recorder.first(on: records + "gw-b/devices", timeout: .seconds(10)) != nil)
        #expect(recorder.on("blebridge/bridge/state").isEmpty)
        #expect(recorder.on("blebridge/bridge/info").isEmpty)
        #expect(recorder.on("blebridge/bridge/devices").isEmpty)
        // The free slots follow the connections: the demo's connected devices take some of gw-a's 5.
        let fewerSlots = await recorder.first(on: records + "gw-a", timeout: .seconds(30)) {
            (recorder.json($0)?["free_slots"] as? Int ?? 5) < 5
        }
        #expect(fewerSlots != nil, "gw-a's free slots never went down; log: \(a.gateway.log.suffix(2000))")
        // And settle on max_connections minus the devices its bridge/devices says are connected.
        func settled() -> (slots: Int?, connected: Int?) {
            let record = recorder.on(records + "gw-a").last.flatMap(recorder.json)
            let devices = recorder.on(records + "gw-a/devices").last.flatMap {
                (try? JSONSerialization.jsonObject(with: Data($0.payload))) as? [[String: Any]]
            }
            return (record?["free_slots"] as? Int, devices?.filter { $0["connected"] as? Bool == true }.count)
        }
        let agree = await recorder.wait(timeout: .seconds(10)) { _ in
            let (slots, connected) = settled()
            return slots != nil && connected != nil && slots == 5 - (connected ?? 0)
        }
        #expect(agree, "free slots \(settled()) disagree with the devices connected")

        // The record goes out on change, at most once a second (arrival times at the recorder).
        let times = recorder.arrivals(on: records + "gw-a").map(\.arrival)
        let gaps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        print(
            "shared broker: gw-a's record published \(times.count) times, gaps \(gaps.map { String(format: "%.3f s", $0) })"
        )
        #expect(gaps.allSatisfy { $0 > 0.8 }, "records closer than the 1 s bound: \(gaps)")

        let killed = Date()
        b.gateway.process.signal(SIGKILL)
        await b.gateway.process.waitForExit()
        let will = await recorder.first(on: records + "gw-b", timeout: .seconds(10)) {
            recorder.json($0)?["state"] as? String == "offline"
        }
        #expect(will.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"state":"offline","gateway_id":"gw-b"}"#)
        let seen = await sees("gw-a", "gw-b", "offline", timeout: .seconds(10))
        #expect(seen != nil, "gw-a never saw gw-b go; log: \(a.gateway.log.suffix(2000))")
        func arrival(_ message: MQTTMessage?, _ topic: String) -> Double? {
            guard let message else { return nil }
            return recorder.arrivals(on: topic).first { $0.message == message }.map {
                $0.arrival.timeIntervalSince(killed) * 1000
            }
        }
        let willMs = arrival(will, records + "gw-b")
        let seenMs = arrival(seen, records + "gw-a/health")
        print(
            "shared broker: SIGKILL -> will on the record \(willMs.map { "\(Int($0)) ms" } ?? "never"), "
                + "-> the survivor's health lists it offline \(seenMs.map { "\(Int($0)) ms" } ?? "never")")
        #expect((seenMs ?? .infinity) < 5000)
        // A newcomer reads the dead gateway's retained record as offline.
        let late = try await MQTTRecorder(url: broker.url)
        try await late.subscribe(records + "gw-b")
        let retained = await late.first(on: records + "gw-b")
        #expect(retained?.retain == true)
        #expect(late.json(retained ?? MQTTMessage(topic: "", payload: []))?["state"] as? String == "offline")
        await late.close()
        await a.stop()
        await b.stop()
        await recorder.close()
        await broker.stop()
    }

    /// A gateway that stops answering without closing its socket (frozen with SIGSTOP: as a power
    /// cut or a network partition looks to the broker) is declared offline by its will after 1.5 x
    /// its keepalive; when it runs again it reconnects and its record says online again, and the
    /// other gateway follows both changes.
    @Test func aFrozenGatewayGoesOfflineByItsWillAndComesBack() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/gateways/#")
        let a = try await Member(id: "gw-a", brokerURL: broker.url)
        let b = try await Member(id: "gw-b", brokerURL: broker.url, keepalive: "5s")
        #expect(
            await Self.sees("gw-a", "gw-b", "online", on: recorder) != nil,
            "gw-a never saw gw-b; log: \(a.gateway.log.suffix(2000))")
        let frozen = Date()
        b.gateway.process.signal(SIGSTOP)
        let will = await Self.recordArrival("gw-b", "offline", on: recorder, after: frozen, timeout: .seconds(20))
        let seenOffline = await Self.sees("gw-a", "gw-b", "offline", on: recorder, timeout: .seconds(20), after: frozen)
        let resumed = Date()
        b.gateway.process.signal(SIGCONT)
        let back = await Self.recordArrival("gw-b", "online", on: recorder, after: resumed, timeout: .seconds(20))
        let seenOnline = await Self.sees("gw-a", "gw-b", "online", on: recorder, timeout: .seconds(20), after: resumed)
        func ms(_ date: Date?, since start: Date) -> String {
            date.map { "\(Int($0.timeIntervalSince(start) * 1000)) ms" } ?? "never"
        }
        print(
            "shared broker, frozen gateway (keepalive 5 s): will \(ms(will, since: frozen)), survivor sees it offline "
                + "\(ms(seenOffline?.arrival, since: frozen)); after SIGCONT record online \(ms(back, since: resumed)), "
                + "survivor sees it online \(ms(seenOnline?.arrival, since: resumed))")
        // MQTT: the broker closes the connection 1.5 x keepalive (7.5 s) after the last packet;
        // mosquitto 2.0.11 was measured at 10.4-11.3 s after the freeze. Not before the keepalive.
        let willAfter = will.map { $0.timeIntervalSince(frozen) } ?? .infinity
        #expect(willAfter >= 5 && willAfter < 20, "will after \(willAfter) s")
        #expect(seenOffline != nil, "gw-a never saw gw-b offline; log: \(a.gateway.log.suffix(2000))")
        #expect(back != nil, "gw-b's record never online again; log: \(b.gateway.log.suffix(2000))")
        #expect(seenOnline != nil, "gw-a never saw gw-b back; log: \(a.gateway.log.suffix(2000))")
        await a.stop()
        await b.stop()
        await recorder.close()
        await broker.stop()
    }
}
