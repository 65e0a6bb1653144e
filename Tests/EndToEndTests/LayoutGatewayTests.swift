import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// User-defined layouts from `config.json` end to end: the simulator's lamp brightness
/// characteristic decoded by a layout and published on MQTT, a `set` encoded by a layout reaching
/// the simulator, and the simulated iBeacon's manufacturer data decoded by a layout.
@Suite(.serialized) struct LayoutGatewayTests {
    /// Brightness 0–100 as a fraction (scale 0.01), for notifications and for writes.
    static var fraction: [String: Any] {
        [
            "name": "lamp_brightness", "fields": [["name": "brightness_fraction", "type": "uint8", "scale": 0.01]],
        ]
    }
    static var level: [String: Any] { ["fields": [["name": "level", "type": "uint8", "scale": 0.01]]] }
    /// Apple's iBeacon frame after the company id: type, length, UUID, major, minor, power.
    static var beacon: [String: Any] {
        [
            "name": "beacon_frame",
            "fields": [
                ["type": "skip", "length": 2], ["name": "beacon_uuid", "type": "bytes", "length": 16],
                ["name": "beacon_major", "type": "uint16_be"], ["name": "beacon_minor", "type": "uint16_be"],
                ["name": "beacon_power", "type": "int8", "unit": "dBm"],
            ],
        ]
    }

    static func withLayouts(_ configuration: inout [String: Any]) {
        guard var devices = configuration["devices"] as? [[String: Any]] else { return }
        for index in devices.indices {
            switch devices[index]["id"] as? String {
            case "lamp":
                var subscribe = devices[index]["subscribe"] as? [[String: Any]] ?? []
                for item in subscribe.indices
                where subscribe[item]["characteristic"] as? String == SimulatedWorld.brightness {
                    subscribe[item]["layout"] = fraction
                }
                devices[index]["subscribe"] = subscribe
                var commands = devices[index]["commands"] as? [[String: Any]] ?? []
                commands.append([
                    "name": "dim", "characteristic": SimulatedWorld.brightness, "operations": ["write"],
                    "layout": level,
                ])
                devices[index]["commands"] = commands
            case "ibeacon":
                devices[index]["advertisement"] = ["layout": beacon, "manufacturer_id": 76]
            default:
                break
            }
        }
        configuration["devices"] = devices
    }

    @Test func layoutsDecodeNotificationsAndAdvertisementsAndEncodeSets() async throws {
        let world = try await SimulatedWorld(edit: Self.withLayouts)
        #expect(
            await world.recorder.first(on: "blebridge/lamp/availability", timeout: .seconds(30)) {
                $0.text == "online"
            } != nil,
            "lamp never online; log: \(world.gateway.log.suffix(3000))")

        // A notification decoded by the subscription's layout: 75 → 0.75.
        try await world.simulator.setCharacteristicValue(
            address: SimulatedWorld.lamp, uuid: SimulatedWorld.brightness, value: [75], notify: true)
        let notified = await world.state("lamp") { ($0["brightness_fraction"] as? Double) == 0.75 }
        #expect(notified != nil, "no layout-decoded brightness; log: \(world.gateway.log.suffix(3000))")
        // Home Assistant discovers the layout's field like any decoded field.
        let discovery = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_lamp/brightness_fraction/config", timeout: .seconds(20))
        #expect(
            discovery.flatMap(world.recorder.json)?["state_topic"] as? String == "blebridge/lamp",
            "no discovery for the layout field; topics: \(Set(world.recorder.all.map(\.topic)).sorted().filter { $0.contains("lamp") })"
        )

        // A set encoded by the command's layout: 0.4 → 40 written to the lamp.
        try await world.simulator.clearWrites(address: SimulatedWorld.lamp)
        var properties = MQTTProperties()
        properties.responseTopic = "e2e/layout"
        try await world.recorder.subscribe("e2e/layout")
        try await world.recorder.publish(
            "blebridge/lamp/set", #"{"dim":{"level":0.4},"transaction":"layout-1"}"#, properties: properties)
        let reply = await world.recorder.first(on: "e2e/layout", timeout: .seconds(20)) {
            world.recorder.json($0)?["transaction"] as? String == "layout-1"
        }
        #expect(
            reply.flatMap(world.recorder.json)?["status"] as? String == "ok",
            "reply \(String(describing: reply?.text)); log: \(world.gateway.log.suffix(3000))")
        #expect(
            try await world.simulator.characteristicValue(address: SimulatedWorld.lamp, uuid: SimulatedWorld.brightness)
                == [40])
        // The lamp notifies its new brightness, decoded by the layout again.
        #expect(await world.state("lamp") { ($0["brightness_fraction"] as? Double) == 0.4 } != nil)

        // A value the layout cannot encode (0.01 × 300 does not fit a uint8) is refused; nothing is written.
        let writes = try await world.simulator.writes(address: SimulatedWorld.lamp).count
        try await world.recorder.publish(
            "blebridge/lamp/set", #"{"dim":{"level":3},"transaction":"layout-2"}"#, properties: properties)
        let refused = await world.recorder.first(on: "e2e/layout", timeout: .seconds(20)) {
            world.recorder.json($0)?["transaction"] as? String == "layout-2"
        }
        let body = refused.flatMap(world.recorder.json)
        #expect(body?["status"] as? String == "error", "\(String(describing: refused?.text))")
        #expect((body?["error"] as? [String: Any])?["code"] as? String == "invalid_value")
        #expect(try await world.simulator.writes(address: SimulatedWorld.lamp).count == writes)

        // The iBeacon's manufacturer data (company 0x004C) decoded by the advertisement's layout.
        let beacon = await world.state("ibeacon") { $0["beacon_major"] != nil }
        #expect(beacon?["beacon_uuid"] is String, "no layout-decoded beacon; log: \(world.gateway.log.suffix(3000))")
        #expect(beacon?["beacon_power"] is Int)
        await world.shutdown()
    }
}
