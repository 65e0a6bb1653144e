import BlueZSimulator
import Foundation
import MQTT
import TestSupport
import Testing

/// The bars of issue 8 against the simulator, real mosquitto and the blebridge binary.
@Suite(.serialized) struct SimulatedGatewayTests {
    @Test func readingsArriveDecodedAndDiscoveryIsComplete() async throws {
        let world = try await SimulatedWorld()
        // A known heart-rate measurement: flags 0x10 (RR present), 72 bpm, RR 1024/1024 s.
        let strap = await world.state("hr_strap") { $0["heart_rate"] != nil }
        #expect(strap != nil, "no heart rate; log: \(world.gateway.log.suffix(3000))")
        try await world.simulator.setCharacteristicValue(
            address: SimulatedWorld.strap, uuid: "2a37", value: [0x10, 72, 0x00, 0x04], notify: true)
        // Exactly the injected reading: the generator's own readings can also be 72 bpm with RR
        // intervals (one matched first in a full run, with RR [0.84, 0.81, 0.83]).
        let exact = await world.state("hr_strap") {
            ($0["heart_rate"] as? Int) == 72 && ($0["rr_intervals"] as? [Double]) == [1.0]
        }
        #expect(exact != nil, "the injected measurement (72 bpm, RR 1.0 s) was not published")
        #expect((exact?["ts"] as? String)?.hasSuffix("Z") == true)
        // Battery read at connect, equal to the simulator's value.
        let battery = Int(
            try await world.simulator.characteristicValue(address: SimulatedWorld.strap, uuid: "2a19")[0])
        let withBattery = await world.state("hr_strap") { $0["battery_level"] != nil || $0["battery"] != nil }
        let published = (withBattery?["battery_level"] ?? withBattery?["battery"]) as? Int
        #expect(
            published.map { abs($0 - battery) <= 1 } == true,
            "published \(String(describing: published)), simulator \(battery)")
        // Thermometer and the passive BTHome sensor.
        #expect(await world.state("thermometer") { $0["temperature"] != nil } != nil)
        // Its three temperatures under readable names, never the old `temperature_<characteristic>`
        // or `<service>_temperature`: the configuration's "temperature" is the room (about 21 °C),
        // the Health Thermometer's measurement the body (about 37 °C).
        let thermometer = await world.state("thermometer", timeout: .seconds(30)) {
            $0["intermediate_temperature"] != nil && $0["body_temperature"] != nil && $0["temperature"] != nil
        }
        #expect(thermometer != nil, "thermometer states: \(world.states("thermometer").suffix(3))")
        #expect((thermometer?["temperature"] as? Double).map { $0 < 30 } == true, "\(thermometer ?? [:])")
        #expect((thermometer?["body_temperature"] as? Double).map { $0 > 34 } == true, "\(thermometer ?? [:])")
        #expect(
            world.states("thermometer").allSatisfy {
                !$0.keys.contains { $0.hasPrefix("temperature_") || $0.hasPrefix("environmental_sensing") }
            })
        #expect(
            await world.recorder.first(on: "homeassistant/sensor/blebridge_thermometer/intermediate_temperature/config")
                .flatMap(world.recorder.json)?["unique_id"] as? String
                == "blebridge_thermometer_intermediate_temperature")
        #expect(await world.state("bthome") { $0["temperature"] != nil && $0["rssi"] != nil } != nil)
        #expect(await world.recorder.first(on: "blebridge/hr_strap/availability") { $0.text == "online" } != nil)
        // Discovery: valid JSON, unique ids, state topics and availability on bridge and device.
        // The strap's Device Information (read after it connected) names its maker and model.
        let heartRate = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_hr_strap/heart_rate/config", timeout: .seconds(30)
        ) { message in
            (world.recorder.json(message)?["device"] as? [String: Any])?["manufacturer"] as? String
                == "Polar Electro Oy"
        }
        let config = try #require(
            heartRate.flatMap(world.recorder.json), "log: \(world.gateway.log.suffix(2000))")
        let device = config["device"] as? [String: Any]
        #expect(device?["model"] as? String == "H10 SIM")
        #expect(device?["sw_version"] as? String == "5.0.0")
        #expect((device?["connections"] as? [[String]]) == [["bluetooth", "C0:FF:EE:00:00:01"]])
        #expect(config["unit_of_measurement"] as? String == "bpm")
        #expect(config["state_topic"] as? String == "blebridge/hr_strap")
        #expect(config["availability_mode"] as? String == "all")
        let temperature = await world.recorder.first(
            on: "homeassistant/sensor/blebridge_thermometer/temperature/config")
        let temperatureConfig = try #require(temperature.flatMap(world.recorder.json))
        #expect(temperatureConfig["device_class"] as? String == "temperature")
        #expect(temperatureConfig["unit_of_measurement"] as? String == "°C")
        let ids = world.recorder.all.filter { $0.topic.hasPrefix("homeassistant/") && !$0.payload.isEmpty }
            .compactMap { world.recorder.json($0)?["unique_id"] as? String }
        #expect(
            Set(ids).count
                == Set(
                    world.recorder.all.filter { $0.topic.hasPrefix("homeassistant/") && !$0.payload.isEmpty }.map(
                        \.topic)
                ).count)
        await world.shutdown()
    }

    @Test func setChangesTheLampAndDisallowedWritesNeverReachIt() async throws {
        let world = try await SimulatedWorld()
        await world.waitOnline("lamp")
        try await world.simulator.clearWrites(address: SimulatedWorld.lamp)
        var properties = MQTTProperties()
        properties.responseTopic = "e2e/lamp"
        properties.correlationData = [1, 2, 3]
        try await world.recorder.subscribe("e2e/lamp")
        try await world.recorder.publish(
            "blebridge/lamp/set", #"{"power":true,"brightness":40,"transaction":"t-1"}"#, properties: properties)
        let reply = await world.recorder.first(on: "e2e/lamp", timeout: .seconds(20))
        let body = try #require(
            reply.flatMap(world.recorder.json), "no reply; log: \(world.gateway.log.suffix(3000))")
        #expect(body["status"] as? String == "ok")
        #expect(body["transaction"] as? String == "t-1")
        #expect(reply?.properties.correlationData == [1, 2, 3])
        #expect(
            try await world.simulator.characteristicValue(address: SimulatedWorld.lamp, uuid: SimulatedWorld.power)
                == [1])
        #expect(
            try await world.simulator.characteristicValue(
                address: SimulatedWorld.lamp, uuid: SimulatedWorld.brightness) == [40])
        // A write the configuration does not allow: refused with not_allowed, nothing reaches the lamp.
        let before = try await world.simulator.writes(address: SimulatedWorld.lamp).count
        let replies = try await MQTTRecorder(url: world.broker.url)
        try await replies.subscribe("e2e/raw")
        var rawProperties = MQTTProperties()
        rawProperties.responseTopic = "e2e/raw"
        rawProperties.correlationData = [4, 5, 6]
        try await replies.publish(
            "blebridge/bridge/request/gatt/write",
            #"{"device":"lamp","characteristic":"6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b","value":"00","transaction":"raw"}"#,
            properties: rawProperties)
        let refused = await replies.first(on: "e2e/raw", timeout: .seconds(20))
        #expect(refused?.properties.correlationData == [4, 5, 6])
        #expect(refused?.text.contains("\"not_allowed\"") == true, "log: \(world.gateway.log.suffix(2000))")
        rawProperties.correlationData = [7]
        try await replies.publish(
            "blebridge/lamp/set", #"{"brightness":250,"transaction":"big"}"#, properties: rawProperties)
        let invalid = await replies.first(on: "e2e/raw") { $0.properties.correlationData == [7] }
        #expect(invalid?.text.contains("\"invalid_value\"") == true)
        await replies.close()
        // Both refusals were decided before anything is written and answered after the decision
        // (an accepted write is answered after the lamp took it): their replies, awaited above, are
        // the events that say no write can still be on its way.
        #expect(try await world.simulator.writes(address: SimulatedWorld.lamp).count == before)
        #expect(
            try await world.simulator.characteristicValue(address: SimulatedWorld.lamp, uuid: SimulatedWorld.power)
                == [1])
        await world.shutdown()
    }
}
