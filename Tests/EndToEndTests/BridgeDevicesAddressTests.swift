import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// `bridge/devices` is published "when one of these changes" (docs/mqtt.md), the address among
/// them. A device whose match has no address learns its address when first seen; for a passive
/// device nothing else republished the list (only connections, connects, disconnects and
/// reloads did), so it said `"address":null` until the next broker connection.
@Suite(.serialized) struct BridgeDevicesAddressTests {
    static let scenario = #"""
        {
          "name": "one-bthome",
          "description": "One BTHome sensor with service data only.",
          "devices": [
            {
              "id": "plain", "address": "C0:FF:EE:00:00:07", "connectable": false, "rssi": -70,
              "advertisement": {
                "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 5.0, "drift": 0.5, "humidity": 60, "start": 70}}],
                "update_interval": "500ms"
              }
            }
          ]
        }
        """#

    @Test func aPassiveDeviceMatchedWithoutAddressHasItsAddressInBridgeDevicesOnceSeen() async throws {
        let directory = try TemporaryDirectory(prefix: "devices-address")
        let scenario = try directory.write("one-bthome.json", Self.scenario)
        let world = try await SimulatedWorld(scenario: scenario.path) { configuration in
            configuration["commands"] = [String: Any]()
            configuration["devices"] = [
                [
                    "id": "bt", "match": ["service": "fcd2"], "connection": "passive",
                    "advertisement": ["decoder": "bthome"],
                ]
            ]
        }
        #expect(
            await world.state("bt") { $0["temperature"] != nil } != nil, "log: \(world.gateway.log.suffix(2000))")
        let listed = await world.recorder.first(on: "blebridge/bridge/devices", timeout: .seconds(10)) {
            $0.text.contains("\"address\":\"C0:FF:EE:00:00:07\"")
        }
        #expect(
            listed != nil,
            "bridge/devices: \(world.recorder.on("blebridge/bridge/devices").map(\.text)); log: \(world.gateway.log.suffix(2000))"
        )
        await world.shutdown()
    }
}
