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

        init(id: String, brokerURL: String) async throws {
            bus = try await DBusDaemonFixture()
            simulator = BlueZSimulator(
                scenario: try Scenario.load("demo"),
                options: BlueZSimulator.Options(disconnectDelay: .milliseconds(100)))
            try await simulator.start(busAddress: bus.address)
            gateway = try GatewayProcess(brokerURL: brokerURL, busAddress: bus.address) { configuration in
                configuration["gateway_id"] = id
                var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
                mqtt["shared_broker"] = true
                // The sample names its client id; two gateways with one id take turns on the broker.
                mqtt["client_id"] = nil
                configuration["mqtt"] = mqtt
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

    @Test func twoGatewaysSeeEachOtherAndTheSurvivorSeesTheWillOfAKilledOne() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/#")
        let a = try await Member(id: "gw-a", brokerURL: broker.url)
        let b = try await Member(id: "gw-b", brokerURL: broker.url)
        let records = "blebridge/bridge/gateways/"
        func record(_ id: String, _ state: String) async -> [String: Any]? {
            let message = await recorder.first(on: records + id, timeout: .seconds(30)) {
                recorder.json($0)?["state"] as? String == state
            }
            return message.flatMap(recorder.json)
        }
        /// The first health message of `observer` listing `peer` in `state`.
        func sees(_ observer: String, _ peer: String, _ state: String, timeout: Duration = .seconds(30)) async
            -> MQTTMessage?
        {
            await recorder.first(on: records + observer + "/health", timeout: timeout) { message in
                let gateways = recorder.json(message)?["gateways"] as? [[String: Any]] ?? []
                return gateways.contains { $0["id"] as? String == peer && $0["state"] as? String == state }
            }
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
}
