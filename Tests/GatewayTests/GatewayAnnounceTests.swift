import Foundation
import TestSupport
import Testing

@testable import Gateway

/// New fields are announced from their own queue (``Gateway/announce(_:)``), after the reading
/// that brought them: the device may have been removed by a reload meanwhile (the queue waits
/// behind a discovery publish the broker does not acknowledge). Announcing it then would leave a
/// retained Home Assistant entity and state entries for a device nobody removes again.
@Suite struct GatewayAnnounceTests {
    @Test func newFieldsOfADeviceRemovedMeanwhileAreNotAnnounced() async throws {
        let directory = try TemporaryDirectory(prefix: "announce-removed")
        let gateway = try await unstartedGateway(in: directory)  // never connected: nothing is published
        let topic = "homeassistant/sensor/blebridge_gone/temperature/config"
        let event = ReadingPipeline.Event(
            device: "gone", sampleTime: Date(), rssi: nil, fromConnection: false,
            discovery: [DiscoveryMessage(topic: topic, payload: Array("{}".utf8))], source: nil)
        await gateway.announce(event)
        #expect(await gateway.discoverySources.devices["gone"] == nil, "sources recorded for a device not configured")
        #expect(try await gateway.state.discoverySources().devices["gone"] == nil)
        await gateway.stop()
    }
}
