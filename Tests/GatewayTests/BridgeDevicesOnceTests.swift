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

    /// A device seen while the gateway subscribes after connecting publishes the list; the
    /// announcement that follows must not send the same list again (it reset what was published,
    /// and `HomeAssistantControlTests` saw two identical lists in a row under load). A new
    /// connection still sends it again.
    @Test func theAnnouncementDoesNotRepeatAListSentOnTheSameConnection() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "devices-announce")
        let gateway = try await unstartedGateway(in: directory, brokerURL: broker.url)
        let watcher = MQTTClient(configuration: try MQTTConfiguration(url: broker.url, clientID: "devices-watcher"))
        try await watcher.connect()
        let messages = try await watcher.subscribe("blebridge/#")
        try await gateway.client.connect()
        /// The lists published before `marker`, which goes out last on the same connection.
        func listsBefore(_ marker: String) async throws -> Int {
            try await gateway.publishRetained("blebridge/test/marker", Array(marker.utf8))
            var count = 0
            for await message in messages {
                if message.topic == "blebridge/bridge/devices" { count += 1 }
                if message.topic == "blebridge/test/marker", message.text == marker { break }
            }
            return count
        }
        await gateway.brokerConnectionBegan()
        try await gateway.publishDevices()  // a device seen while connecting
        await gateway.announceBridge()
        #expect(try await listsBefore("first") == 1)
        // The next connection sends it again.
        await gateway.brokerConnectionBegan()
        await gateway.announceBridge()
        #expect(try await listsBefore("second") == 1)
        await watcher.disconnect()
        await gateway.stop()
        await broker.stop()
    }
}
