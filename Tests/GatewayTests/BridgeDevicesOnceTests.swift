import MQTT
import TestSupport
import Testing

@testable import Gateway

/// `bridge/devices` (retained) goes out only when it changed. Two calls that overlap on the actor
/// (the first awaiting its PUBACK) found the same payload not recorded yet, and both published it:
/// two identical retained messages in a row (`HomeAssistantControlTests` caught it under load).
@Suite struct BridgeDevicesOnceTests {
    @Test func overlappingCallsPublishAnUnchangedListOnce() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "devices-once")
        let gateway = try await unstartedGateway(in: directory, brokerURL: broker.url)
        let watcher = MQTTClient(configuration: try MQTTConfiguration(url: broker.url, clientID: "devices-watcher"))
        try await watcher.connect()
        let messages = try await watcher.subscribe("blebridge/#")
        try await gateway.client.connect()
        // Both reach the actor before either publish is acknowledged: the second runs while the
        // first awaits its PUBACK.
        async let first: Void = gateway.publishDevices()
        async let second: Void = gateway.publishDevices()
        _ = try await (first, second)
        // A marker on the same connection: once it arrives, every earlier publish has.
        try await gateway.publishRetained("blebridge/test/marker", Array("end".utf8))
        var devices = 0
        for await message in messages {
            if message.topic == "blebridge/bridge/devices" { devices += 1 }
            if message.topic == "blebridge/test/marker" { break }
        }
        #expect(devices == 1)
        await watcher.disconnect()
        await gateway.stop()
        await broker.stop()
    }
}
