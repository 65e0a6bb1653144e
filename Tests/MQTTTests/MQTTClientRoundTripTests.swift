import Foundation
import MQTT
import TestSupport
import Testing
import Timekeeping

@Suite struct MQTTClientRoundTripTests {
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func messagesRoundTripAtEveryQoS(version: MQTTProtocolVersion) async throws {
        let broker = try await MosquittoFixture()
        let subscriber = try await MQTTTestHelpers.connectedClient(broker, clientID: "sub", protocolVersion: version)
        let publisher = try await MQTTTestHelpers.connectedClient(broker, clientID: "pub", protocolVersion: version)
        let stream = try await subscriber.subscribe("sensors/+/reading", qos: .exactlyOnce)
        for qos in MQTTQoS.allCases {
            try await publisher.publish(
                MQTTMessage(topic: "sensors/\(qos.rawValue)/reading", text: "q\(qos.rawValue)", qos: qos))
        }
        let received = await MQTTTestHelpers.collect(stream, count: 3)
        #expect(received.map(\.topic) == ["sensors/0/reading", "sensors/1/reading", "sensors/2/reading"])
        #expect(received.map(\.text) == ["q0", "q1", "q2"])
        #expect(received.map(\.qos) == [.atMostOnce, .atLeastOnce, .exactlyOnce])
        #expect(received.allSatisfy { !$0.retain })
        await publisher.disconnect()
        await subscriber.disconnect()
        await broker.stop()
    }

    @Test func retainedMessageReachesALaterSubscriberAndBinaryPayloadIsIntact() async throws {
        let broker = try await MosquittoFixture()
        let publisher = try await MQTTTestHelpers.connectedClient(broker, clientID: "pub")
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await publisher.publish(
            MQTTMessage(topic: "bridge/state", payload: payload, qos: .atLeastOnce, retain: true))
        let subscriber = try await MQTTTestHelpers.connectedClient(broker, clientID: "sub")
        let received = await MQTTTestHelpers.collect(try await subscriber.subscribe("bridge/#"), count: 1)
        #expect(received.first?.payload == payload)
        #expect(received.first?.retain == true)
        await publisher.disconnect()
        await subscriber.disconnect()
    }

    @Test func routesMessagesOnlyToMatchingStreams() async throws {
        let broker = try await MosquittoFixture()
        let client = try await MQTTTestHelpers.connectedClient(broker, clientID: "router")
        let lamp = try await client.subscribe("blebridge/lamp/set")
        let everything = try await client.subscribe("blebridge/#")
        try await client.publish(MQTTMessage(topic: "blebridge/strap/set", text: "a"))
        try await client.publish(MQTTMessage(topic: "blebridge/lamp/set", text: "b"))
        #expect(await MQTTTestHelpers.collect(lamp, count: 1).map(\.text) == ["b"])
        let all = await MQTTTestHelpers.collect(everything, count: 3, timeout: .milliseconds(500))
        #expect(all.map(\.text).sorted().first == "a")
        #expect(all.contains { $0.text == "b" })
        await client.disconnect()
    }

    /// A delivered message carries the time the network thread read it, not the time its reader
    /// got to it: a reader on a busy cooperative pool (a test process running many tests) would
    /// otherwise measure the pool's delay as the message's. The client is its own subscriber, and
    /// mosquitto writes the PUBLISH to it before the PUBACK on the same socket, so the message was
    /// read before `publish` returned; the stream is read only afterwards.
    @Test func aDeliveredMessageIsStampedWhenTheNetworkThreadReadIt() async throws {
        let broker = try await MosquittoFixture()
        let client = try await MQTTTestHelpers.connectedClient(broker, clientID: "stamp")
        let stream = try await client.subscribe("stamp/#", qos: .atLeastOnce)
        let sent = MQTTMessage(topic: "stamp/1", text: "x", qos: .atLeastOnce)
        let before = Date()
        try await client.publish(sent)
        let acknowledged = Date()
        let received = try #require(await MQTTTestHelpers.collect(stream, count: 1).first)
        let stamp = try #require(received.receivedAt)
        #expect(
            stamp >= before && stamp <= acknowledged, "stamped \(stamp), sent \(before), acknowledged \(acknowledged)")
        // The stamp is not part of the message's identity.
        #expect(sent.receivedAt == nil)
        #expect(received == sent && received.hashValue == sent.hashValue)
        await client.disconnect()
    }

    /// The stamp comes from the configuration's wall clock, not from a `Date()` of its own.
    @Test func theStampComesFromTheConfiguredClock() async throws {
        let broker = try await MosquittoFixture()
        let clock = ManualClock()
        clock.advance(by: .seconds(86_400 * 365))  // a year ahead: no real time can match it
        var configuration = try MQTTTestHelpers.configuration(broker, clientID: "stamp-clock")
        configuration.clock = clock
        let client = MQTTClient(configuration: configuration)
        try await client.connect()
        let stream = try await client.subscribe("stamp/#", qos: .atLeastOnce)
        try await client.publish(MQTTMessage(topic: "stamp/2", text: "y", qos: .atLeastOnce))
        let received = try #require(await MQTTTestHelpers.collect(stream, count: 1).first)
        #expect(received.receivedAt == clock.date)
        await client.disconnect()
    }

    @Test func mqtt5PropertiesSurviveTheRoundTrip() async throws {
        let broker = try await MosquittoFixture()
        let client = try await MQTTTestHelpers.connectedClient(broker, clientID: "props")
        let stream = try await client.subscribe("request/#", qos: .atLeastOnce)
        let properties = MQTTProperties(
            messageExpiry: 120, responseTopic: "response/42", correlationData: [0, 1, 2, 0xFF],
            userProperties: [MQTTUserProperty("device", "lamp"), MQTTUserProperty("device", "strap")],
            contentType: "application/json")
        try await client.publish(MQTTMessage(topic: "request/1", text: "{}", qos: .atLeastOnce, properties: properties))
        let received = try #require(await MQTTTestHelpers.collect(stream, count: 1).first)
        #expect(received.properties.responseTopic == "response/42")
        #expect(received.properties.correlationData == [0, 1, 2, 0xFF])
        #expect(received.properties.userProperties == properties.userProperties)
        #expect(received.properties.contentType == "application/json")
        // The broker forwards the remaining expiry (at most what was sent).
        #expect((received.properties.messageExpiry ?? 0) > 100 && (received.properties.messageExpiry ?? 0) <= 120)
        await client.disconnect()
    }

    /// Interop with the independent mosquitto clients, in both directions, so that a symmetric
    /// mistake in our encoding and decoding cannot cancel out.
    @Test func propertiesInteroperateWithMosquittoClients() async throws {
        let broker = try await MosquittoFixture()
        let client = try await MQTTTestHelpers.connectedClient(broker, clientID: "interop")
        // Retained, so mosquitto_sub receives it when its subscription is in place, whenever
        // that is (the broker keeps the message's properties with it).
        try await client.publish(
            MQTTMessage(
                topic: "out/x", text: "hello", qos: .atLeastOnce, retain: true,
                properties: MQTTProperties(
                    responseTopic: "reply/here", userProperties: [MQTTUserProperty("k", "v")], contentType: "text/plain"
                )))
        let watcher = try ChildProcess(
            "mosquitto_sub",
            [
                "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-t", "out/#", "-C", "1", "-W", "10",
                "-F", "%t|%p|%R|%C|%P",
            ])
        #expect(await watcher.waitForExit(timeout: .seconds(10)) == 0)
        #expect(
            watcher.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
                == "out/x|hello|reply/here|text/plain|k:v")

        let incoming = try await client.subscribe("in/#")
        let published = try await ChildProcess.run(
            "mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-t", "in/y", "-m", "payload", "-q", "1",
                "-D", "publish", "correlation-data", "abc", "-D", "publish", "response-topic", "back",
                "-D", "publish", "user-property", "name", "value", "-D", "publish", "message-expiry-interval", "60",
            ])
        #expect(published.status == 0, "\(published.stderr)")
        let received = try #require(await MQTTTestHelpers.collect(incoming, count: 1).first)
        #expect(received.text == "payload")
        #expect(received.properties.correlationData == Array("abc".utf8))
        #expect(received.properties.responseTopic == "back")
        #expect(received.properties.userProperties == [MQTTUserProperty("name", "value")])
        #expect(received.properties.messageExpiry.map { $0 <= 60 && $0 > 50 } == true)
        await client.disconnect()
    }
}
