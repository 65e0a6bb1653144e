import BlueZSimulator
import Bluetooth
import Foundation
import TestSupport
import Testing

/// Issue 17, item 4: each consumer sensor family's scenario (docs/scenarios/<family>.json) in the
/// simulator, with `auto_devices` on and no configuration entry for its devices, is published
/// under `<decoder>_<last 3 address bytes>` with Home Assistant discovery naming the maker.
@Suite(.serialized) struct ConsumerSensorsEndToEndTests {
    struct Expectation: Sendable, CustomTestStringConvertible {
        var scenario: String
        var id: String
        var field: String
        var value: Double
        var manufacturer: String
        /// The family's decoders (the first names `id`).
        var decoders: [String]
        /// `auto_devices.bind_keys` (encrypted families).
        var bindKeys: [String: String] = [:]
        var testDescription: String { "\(scenario): \(id).\(field)" }
    }

    static let expectations = [
        // The Outdoor Meter's reading is only in its manufacturer data: -3.3 °C.
        Expectation(
            scenario: "switchbot", id: "switchbot_170203", field: "temperature", value: -3.3, manufacturer: "SwitchBot",
            decoders: ["switchbot"]),
        Expectation(
            scenario: "qingping", id: "qingping_170214", field: "co2", value: 1000, manufacturer: "Qingping",
            decoders: ["qingping"]),
        Expectation(
            scenario: "sensorpush", id: "sensorpush_170222", field: "pressure", value: 1013.25,
            manufacturer: "SensorPush", decoders: ["sensorpush", "sensorpush_ht1"]),
        Expectation(
            scenario: "oralb", id: "oralb_170231", field: "time", value: 90, manufacturer: "Oral-B", decoders: ["oralb"]
        ),
        Expectation(
            scenario: "mopeka", id: "mopeka_170241", field: "tank_level", value: 384, manufacturer: "Mopeka IOT",
            decoders: ["mopeka"]),
        // The body composition scale's final weight and its impedance.
        Expectation(
            scenario: "scales", id: "miscale_v2_170402", field: "impedance", value: 500, manufacturer: "Xiaomi",
            decoders: ["miscale_v1", "miscale_v2"]),
        Expectation(
            scenario: "mibeacon", id: "mibeacon_170501", field: "temperature", value: 21.5, manufacturer: "Xiaomi",
            decoders: ["mibeacon"]),
        // Encrypted: every device's advertisement key in auto_devices.bind_keys.
        Expectation(
            scenario: "victron", id: "victron_170302", field: "state_of_charge", value: 87.5,
            manufacturer: "Victron Energy", decoders: ["victron"],
            bindKeys: Dictionary(
                uniqueKeysWithValues: (1...7).map { ("C0:FF:EE:17:03:0\($0)", "0df4d0617b6c4e1b9d3f1a2b3c4d5e6f") })),
    ]

    @Test(arguments: expectations) func scenarioDeviceIsDiscoveredAndDecoded(_ expected: Expectation) async throws {
        let scenario = try Scenario.load(expected.scenario)
        let world = try await SimulatedWorld(
            edit: { configuration in
                configuration["auto_devices"] = ["enabled": true, "max_devices": 20, "bind_keys": expected.bindKeys]
            },
            world: { $0.devices += scenario.devices })
        let state = await world.state(expected.id) { $0[expected.field] != nil }
        #expect(
            (state?[expected.field] as? NSNumber)?.doubleValue == expected.value,
            "log: \(world.gateway.log.suffix(3000))")
        let config = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_\(expected.id)/\(expected.field)/config")
        let discovery = try #require(config.flatMap(world.recorder.json))
        #expect((discovery["device"] as? [String: Any])?["manufacturer"] as? String == expected.manufacturer)
        #expect(discovery["state_topic"] as? String == "blebridge/\(expected.id)")
        // Every device of the scenario is one automatic device of one of the family's decoders.
        for device in scenario.devices {
            let ids = expected.decoders.map { "\($0)_\(Hex.string(device.address.bytes.suffix(3)))" }
            #expect(
                await waitUntil(timeout: .seconds(20)) { ids.contains { !world.states($0).isEmpty } },
                "\(device.id) published as one of \(ids)")
        }
        await world.shutdown()
    }

    /// MiBeacon's button object: the K9B-2BTN switch's left button double-pressed is published as
    /// `button_left` and announced as a Home Assistant event entity (device class `button`, the
    /// K9B's event types); the dimmer's turn and the cube's too.
    @Test func mibeaconButtonsBecomeHomeAssistantEvents() async throws {
        let scenario = try Scenario.load("mibeacon")
        let world = try await SimulatedWorld(
            edit: { configuration in configuration["auto_devices"] = ["enabled": true, "max_devices": 20] },
            world: { $0.devices += scenario.devices })
        let state = await world.state("mibeacon_170504") { $0["button_left"] != nil }
        #expect(state?["button_left"] as? String == "double_press", "log: \(world.gateway.log.suffix(3000))")
        let config = await world.recorder.first(on: "homeassistant/event/blebridge_mibeacon_170504/button_left/config")
        let discovery = try #require(config.flatMap(world.recorder.json))
        #expect(discovery["device_class"] as? String == "button")
        #expect(discovery["event_types"] as? [String] == ["press", "long_press", "double_press"])
        #expect(discovery["state_topic"] as? String == "blebridge/mibeacon_170504")
        // Rendered as Home Assistant renders it: the event of a state that carries the press, and
        // nothing (no event) for one that does not.
        let template = try #require(discovery["value_template"] as? String)
        let rendered = try await HomeAssistantControlTests.render(
            template, state: #"{"button_left":"double_press","ts":"2026-12-02T00:00:00.000Z"}"#)
        #expect(rendered == #"{"event_type":"double_press"}"#)
        #expect(try await HomeAssistantControlTests.render(template, state: #"{"battery":90}"#) == "")
        let dimmer = await world.state("mibeacon_170505") { $0["dimmer"] != nil }
        #expect(dimmer?["dimmer"] as? String == "rotate_right")
        #expect((dimmer?["dimmer_steps"] as? NSNumber)?.intValue == 3)
        let cube = await world.state("mibeacon_170506") { $0["cube"] != nil }
        #expect(cube?["cube"] as? String == "rotate_left")
        #expect(await world.recorder.first(on: "homeassistant/event/blebridge_mibeacon_170506/cube/config") != nil)
        await world.shutdown()
    }
}
