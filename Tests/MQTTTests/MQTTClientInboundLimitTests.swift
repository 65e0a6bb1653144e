import MQTT
import TestSupport
import Testing

/// What a client can keep from reaching it: retained messages at SUBSCRIBE (MQTT 5 Retain
/// Handling 2) and packets over its Maximum Packet Size (MQTT 5 CONNECT property).
@Suite struct MQTTClientInboundLimitTests {
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func retainedMessagesAtSubscribeCanBeDeclinedOnMQTT5(version: MQTTProtocolVersion) async throws {
        let broker = try await MosquittoFixture()
        let publisher = try await MQTTTestHelpers.connectedClient(broker, clientID: "pub")
        try await publisher.publish(MQTTMessage(topic: "cmd/lamp/set", text: "stale", retain: true))
        let subscriber = try await MQTTTestHelpers.connectedClient(broker, clientID: "sub", protocolVersion: version)
        let stream = try await subscriber.subscribe("cmd/+/set", retainedAtSubscribe: false)
        try await publisher.publish(MQTTMessage(topic: "cmd/lamp/set", text: "live"))
        let received = await MQTTTestHelpers.collect(stream, count: version == .v5 ? 1 : 2)
        if version == .v5 {
            #expect(received.map(\.text) == ["live"])
        } else {
            // 3.1.1 has no Retain Handling: the stale message arrives, flagged retained.
            #expect(received.map(\.text) == ["stale", "live"])
            #expect(received.map(\.retain) == [true, false])
        }
        await publisher.disconnect()
        await subscriber.disconnect()
        await broker.stop()
    }

    @Test func theBrokerDropsPacketsOverTheAnnouncedMaximumPacketSize() async throws {
        let broker = try await MosquittoFixture()
        var configuration = try MQTTTestHelpers.configuration(broker, clientID: "small")
        configuration.maximumPacketSize = 1024
        let subscriber = MQTTClient(configuration: configuration)
        try await subscriber.connect()
        let stream = try await subscriber.subscribe("big/#")
        let publisher = try await MQTTTestHelpers.connectedClient(broker, clientID: "pub")
        try await publisher.publish(MQTTMessage(topic: "big/one", payload: Array(repeating: 0x41, count: 4096)))
        try await publisher.publish(MQTTMessage(topic: "big/one", text: "small"))
        let received = await MQTTTestHelpers.collect(stream, count: 1)
        #expect(received.map(\.text) == ["small"])
        await publisher.disconnect()
        await subscriber.disconnect()
        await broker.stop()
    }
}
