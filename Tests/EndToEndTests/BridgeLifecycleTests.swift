import Foundation
import MQTT
import TestSupport
import Testing

/// The gateway's MQTT contract that needs no Bluetooth traffic: bridge state with last will,
/// clean shutdown, and commands refused with the documented error codes.
@Suite(.serialized) struct BridgeLifecycleTests {
    @Test func onlineRetainedThenOfflineOnSIGTERMWithoutTheWill() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        let online = await recorder.first(on: "blebridge/bridge/state") { $0.text == #"{"state":"online"}"# }
        #expect(online != nil, "no online state; log: \(gateway.log)")
        #expect(await recorder.first(on: "blebridge/bridge/info") != nil)
        #expect(await recorder.first(on: "blebridge/bridge/devices") != nil)
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(30)) == 0)
        #expect(await recorder.first(on: "blebridge/bridge/state") { $0.text == #"{"state":"offline"}"# } != nil)
        // The retained state a newcomer sees is offline.
        let late = try await MQTTRecorder(url: broker.url)
        try await late.subscribe("blebridge/bridge/state")
        let retained = await late.first(on: "blebridge/bridge/state")
        #expect(retained?.text == #"{"state":"offline"}"#)
        #expect(retained?.retain == true)
        await late.close()
        await recorder.close()
        await broker.stop()
    }

    /// Every command the gateway received is answered, also those arriving in the last moments of
    /// a shutdown (after its response queue closed): commands stream in across SIGTERM, the ones
    /// the broker queues after the DISCONNECT are answered by the restarted gateway (persistent
    /// session), so every transaction gets an answer.
    @Test func everyCommandIsAnsweredAcrossAShutdown() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        let answers = "blebridge/bridge/response/lamp/set"
        try await recorder.subscribe(answers)
        let gateway = try GatewayProcess(brokerURL: broker.url)
        var sent = 0
        func command() async throws {
            try await recorder.publish("blebridge/lamp/set", #"{"colour":1,"transaction":\#(sent)}"#)
            sent += 1
        }
        // Commands are answered (subscriptions in place) before the shutdown starts; earlier ones
        // may reach no subscription, so the probes do not count.
        var probes = 0
        let ready = try await waitUntil(timeout: .seconds(20), interval: .milliseconds(100)) {
            probes += 1
            try await recorder.publish("blebridge/lamp/set", #"{"colour":1,"transaction":"probe-\#(probes)"}"#)
            return !recorder.on(answers).isEmpty
        }
        #expect(ready, "no answer; log: \(gateway.log.suffix(2000))")
        gateway.process.signal(SIGTERM)
        let clock = ContinuousClock()
        let limit = clock.now + .seconds(15)
        var during = 0
        while gateway.process.isRunning, clock.now < limit {
            try await command()
            during += 1
            try await Task.sleep(for: .microseconds(300))
        }
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        for _ in 0..<20 { try await command() }
        let restarted = try GatewayProcess(restarting: gateway)
        // Each answer's JSON is read once: parsing them all on every 50 ms poll grows with the
        // square of their number (thousands under ThreadSanitizer) and held the poll for minutes.
        var seen = Set<Int>()
        var read = 0
        func unanswered() -> [Int] {
            let replies = recorder.on(answers)
            for reply in replies.dropFirst(read) {
                if let transaction = recorder.json(reply)?["transaction"] as? Int { seen.insert(transaction) }
            }
            read = replies.count
            return (0..<sent).filter { !seen.contains($0) }
        }
        let complete = await recorder.wait(timeout: .seconds(30)) { _ in unanswered().isEmpty }
        let missing = unanswered()
        print(
            "\(sent) commands, \(during) during the shutdown; answered over a second connection: "
                + "\(gateway.log.contains("over a second connection"))")
        #expect(
            complete,
            """
            \(missing.count) of \(sent) commands (\(during) sent during the shutdown) never answered: \
            \(missing.prefix(20)); log: \(gateway.log.suffix(1500))
            """)
        await restarted.process.stop(grace: .seconds(10))
        await recorder.close()
        await broker.stop()
    }

    @Test func lastWillSaysOfflineWhenTheGatewayIsKilled() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/state")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        #expect(await recorder.first(on: "blebridge/bridge/state") { $0.text.contains("online") } != nil)
        gateway.process.signal(SIGKILL)
        await gateway.process.waitForExit()
        #expect(
            await recorder.first(on: "blebridge/bridge/state", timeout: .seconds(10)) { $0.text.contains("offline") }
                != nil)
        await recorder.close()
        await broker.stop()
    }

    @Test func malformedCommandsAreAnsweredWithDocumentedCodesAndNothingCrashes() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/bridge/response/#")
        try await recorder.subscribe("e2e/replies")
        try await recorder.subscribe("blebridge/bridge/state")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        #expect(await recorder.first(on: "blebridge/bridge/state") { $0.text.contains("online") } != nil)
        // Subscribed by now: the client queues its SUBSCRIBEs as it handles CONNACK, before the
        // gateway hears of the connection and publishes `online`, and the broker handles one
        // connection's packets in order.

        func code(_ message: MQTTMessage?) -> String? {
            guard let message, let object = recorder.json(message), let error = object["error"] as? [String: Any] else {
                return nil
            }
            return error["code"] as? String
        }
        let cases: [(topic: String, payload: String, code: String)] = [
            ("blebridge/lamp/set", "{not json", "invalid_json"),
            ("blebridge/lamp/set", "[1,2]", "invalid_json"),
            ("blebridge/lamp/set", #"{"brightness":"high","transaction":"t-type"}"#, "invalid_value"),
            ("blebridge/lamp/set", #"{"brightness":101}"#, "invalid_value"),
            ("blebridge/oven/set", #"{"power":true}"#, "unknown_device"),
            ("blebridge/lamp/set", #"{"colour":"red"}"#, "not_allowed"),
            ("blebridge/hr_strap/set", #"{"heart_rate":1}"#, "not_allowed"),
            (
                "blebridge/bridge/request/gatt/write", #"{"device":"lamp","characteristic":"2a06","value":"01"}"#,
                "not_allowed"
            ),
            // Raw GATT is off in the sample configuration, even for its allowlisted characteristic.
            (
                "blebridge/bridge/request/gatt/read",
                #"{"device":"lamp","characteristic":"6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b"}"#, "not_allowed"
            ),
            (
                "blebridge/bridge/request/gatt/notify",
                #"{"device":"lamp","characteristic":"6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b","enable":true}"#,
                "not_allowed"
            ),
            ("blebridge/bridge/request/reboot", "{}", "invalid_request"),
            (
                "blebridge/lamp/set", "{\"power\":\"" + String(repeating: "x", count: 100_000) + "\"}",
                "payload_too_large"
            ),
        ]
        for (index, item) in cases.enumerated() {
            var properties = MQTTProperties()
            properties.responseTopic = "e2e/replies"
            properties.correlationData = Array("case-\(index)".utf8)
            try await recorder.publish(item.topic, item.payload, properties: properties)
            let reply = await recorder.first(on: "e2e/replies") {
                $0.properties.correlationData == Array("case-\(index)".utf8)
            }
            #expect(code(reply) == item.code, "\(item.topic) \(item.payload.prefix(60)) → \(reply?.text ?? "no reply")")
        }
        // Without a response topic, answers go to bridge/response/<device>/set, with the transaction.
        try await recorder.publish("blebridge/lamp/set", #"{"colour":1,"transaction":"abc"}"#)
        let plain = await recorder.first(on: "blebridge/bridge/response/lamp/set") { $0.text.contains("abc") }
        #expect(plain.flatMap(recorder.json)?["transaction"] as? String == "abc")

        // 1,000 commands in about a second (half invalid, half valid): every one answered, the
        // valid ones beyond the lamp's 5/s rate-limited, no crash.
        recorder.clear()
        let start = ContinuousClock.now
        for index in 0..<1000 {
            let body = index % 2 == 0 ? #""brightness":"x""# : #""power":true"#
            try await recorder.publish("blebridge/lamp/set", "{\(body),\"transaction\":\(index)}")
        }
        let sent = ContinuousClock.now - start
        let answered = await recorder.wait(timeout: .seconds(20)) {
            $0.filter { $0.topic == "blebridge/bridge/response/lamp/set" }.count >= 1000
        }
        let replies = recorder.on("blebridge/bridge/response/lamp/set")
        #expect(answered, "\(replies.count) of 1000 answered (sent in \(sent))")
        let codes = replies.map { code($0) ?? "ok" }
        #expect(Set(codes).isSubset(of: ["invalid_value", "rate_limited", "device_unavailable", "timeout", "ok"]))
        #expect(codes.filter { $0 == "invalid_value" }.count == 500)
        #expect(codes.filter { $0 == "rate_limited" }.count >= 400)
        #expect(gateway.process.isRunning)
        // Still responsive afterwards: the 1,000 answers above say the flood has been handled, and
        // bridge requests have a bucket of their own (the lamp's is the one that is empty now).
        try await recorder.publish("blebridge/bridge/request/devices", #"{"transaction":"after"}"#)
        let devices = await recorder.first(on: "blebridge/bridge/response/devices") { $0.text.contains("after") }
        #expect(devices.flatMap(recorder.json)?["status"] as? String == "ok")
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        await recorder.close()
        await broker.stop()
    }
}
