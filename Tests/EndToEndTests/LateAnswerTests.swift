import Configuration
import Foundation
import MQTT
import TestSupport
import Testing

@testable import Gateway

/// The last resort of a shutdown: answers to commands received while the DISCONNECT went out
/// leave over a second, short connection (the race is too narrow to reach from outside on
/// purpose, so this drives the gateway's own path directly, against a real broker).
@Suite struct LateAnswerTests {
    @Test func answersLeftAfterTheDisconnectGoOutOverASecondConnection() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("e2e/late")
        let directory = try TemporaryDirectory(prefix: "late-answer")
        let gateway = try await Gateway(
            configuration: BridgeConfiguration(),
            options: GatewayOptions(brokerURL: broker.url, outboxPath: directory.file("outbox.sqlite").path))
        // The response queue has closed (as in `stop`): an answer decided now waits.
        for continuation in await gateway.outgoing.values { continuation.finish() }
        var properties = MQTTProperties()
        properties.correlationData = Array("c-1".utf8)
        await gateway.send(
            MQTTMessage(topic: "e2e/late", text: #"{"status":"error"}"#, qos: .atLeastOnce, properties: properties))
        #expect(await gateway.lateResponses.count == 1)
        await gateway.answerOverASecondConnection()
        let answer = await recorder.first(on: "e2e/late")
        #expect(answer?.text == #"{"status":"error"}"#)
        #expect(answer?.properties.correlationData == Array("c-1".utf8))
        #expect(await gateway.lateResponses.isEmpty)
        await recorder.close()
        await broker.stop()
    }
}
