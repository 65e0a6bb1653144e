import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// The `hygrometers` scenario through the blebridge binary, the simulator and real mosquitto:
/// Govee and INKBIRD sensors (readings in manufacturer data, INKBIRD's in the company-id bytes)
/// and Govee's H5181 and H5182 meat thermometers (one probe unplugged: null)
/// found by `auto_devices` with the built-in decoders and Home Assistant discovery, and the
/// ThermoPro read by a user layout on `"manufacturer_id": "any"` (docs/configuration.md).
@Suite(.serialized) struct HygrometersEndToEndTests {
    static var thermoProLayout: [String: Any] {
        [
            "name": "thermopro_tp357",
            "fields": [
                ["type": "skip", "length": 1],
                ["name": "temperature", "type": "int16_le", "scale": 0.1, "unit": "°C", "device_class": "temperature"],
                ["name": "humidity", "type": "uint8", "unit": "%", "device_class": "humidity"],
                ["type": "bits", "length": 1, "bits": [["name": "battery_level", "shift": 0, "width": 2]]],
                ["name": "rest", "type": "bytes"],
            ],
        ]
    }

    @Test func manufacturerDataSensorsArePublished() async throws {
        let world = try await SimulatedWorld(scenario: "hygrometers") { configuration in
            configuration["devices"] = [
                [
                    "id": "greenhouse", "match": ["name_prefix": "TP357"],
                    "advertisement": ["manufacturer_id": "any", "layout": Self.thermoProLayout],
                ]
            ]
            configuration["auto_devices"] = ["enabled": true, "max_devices": 10]
            configuration.removeValue(forKey: "commands")  // its raw GATT allow list names the demo's lamp
        }
        let h5075 = await world.state("govee_000101") { $0["temperature"] != nil }
        #expect(h5075?["temperature"] as? Double == 23.8, "log: \(world.gateway.log.suffix(3000))")
        #expect(h5075?["humidity"] as? Double == 29.2)
        #expect(h5075?["model"] as? String == "H5075")
        #expect(await world.state("govee_000102") { $0["temperature"] != nil }?["humidity"] as? Double == 50.24)
        #expect(await world.state("inkbird_000104") { $0["temperature"] != nil }?["temperature"] as? Double == 23.45)
        #expect(await world.state("inkbird_000105") { $0["temperature"] != nil }?["humidity"] as? Double == 48.3)
        let bbq = await world.state("inkbird_000106") { $0["temperature_probe_4"] != nil }
        #expect(bbq?["temperature_probe_4"] as? Double == 300)
        let h5181 = await world.state("govee_000107") { $0["temperature_probe_1"] != nil }
        #expect(h5181?["model"] as? String == "H5181")
        #expect(h5181?["temperature_probe_1"] as? Double == 27)
        #expect(h5181?["temperature_alarm_probe_1"] as? Double == 75)
        let h5182 = await world.state("govee_000108") { $0["temperature_probe_1"] != nil }
        #expect(h5182?["temperature_probe_1"] as? Double == 23.5)
        #expect(h5182?["temperature_alarm_probe_2"] as? Double == 74)
        #expect(h5182?.keys.contains("temperature_probe_2") == true && h5182?["temperature_probe_2"] is NSNull)
        // Probe 1's entity; the unplugged probe 2 (null) gets none until it reports a value.
        let probe = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_govee_000108/temperature_probe_1/config")
        #expect(probe.flatMap(world.recorder.json)?["device_class"] as? String == "temperature")
        let greenhouse = await world.state("greenhouse") { $0["temperature"] != nil }
        #expect(greenhouse?["temperature"] as? Double == 22.9)
        #expect(greenhouse?["battery_level"] as? Int == 0)
        let config = await world.recorder.first(on: "homeassistant/sensor/blebridge_govee_000101/temperature/config")
        let temperature = try #require(config.flatMap(world.recorder.json))
        #expect(temperature["device_class"] as? String == "temperature")
        #expect((temperature["device"] as? [String: Any])?["manufacturer"] as? String == "Govee")
        // The ThermoPro is configured, so it is not an automatic device too.
        #expect(!world.gateway.log.contains("automatic device added id=thermopro"))
        await world.shutdown()
    }
}
