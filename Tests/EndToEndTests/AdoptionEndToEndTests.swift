import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17, item 1 (adoption), against the simulator, real mosquitto and the blebridge binary:
/// the demo's BTHome sensor, left out of `devices`, becomes `bthome_000003` by itself and is then
/// adopted over MQTT as `kitchen`: its state moves to `blebridge/kitchen`, Home Assistant's
/// entities of the old id are removed (empty retained configs) and the new ones announced,
/// `bridge/devices` lists it, a `device_left` event says it was adopted, and after a restart it
/// is still `kitchen`; `bridge/request/device/remove` undoes it. Refusals carry their codes.
@Suite(.serialized) struct AdoptionEndToEndTests {
    @Test func anAutomaticDeviceIsAdoptedAndStaysAdoptedAfterARestart() async throws {
        let world = try await SimulatedWorld { configuration in
            let devices = configuration["devices"] as? [[String: Any]] ?? []
            configuration["devices"] = devices.filter { $0["id"] as? String != "bthome" }
            configuration["auto_devices"] = ["enabled": true, "max_devices": 10]
        }
        #expect(
            await world.state("bthome_000003") { $0["temperature"] != nil } != nil,
            "log: \(world.gateway.log.suffix(3000))")
        let oldConfig = "homeassistant/sensor/blebridge_bthome_000003/temperature/config"
        #expect(await world.recorder.first(on: oldConfig) { !$0.payload.isEmpty } != nil)

        try await world.recorder.subscribe("e2e/answers")
        let request = "blebridge/bridge/request/device/adopt"
        let refusals: [(String, String)] = [
            (#"{"device":"nothing_here","id":"x"}"#, "unknown_device"),
            (#"{"device":"bthome_000003","id":"hr_strap"}"#, "id_taken"),
            (#"{"device":"bthome_000003","id":"bad id"}"#, "invalid_value"),
            (#"{"device":"bthome_000003","id":"k","bind_key":"12"}"#, "invalid_value"),
            (#"{"device":"bthome_000003"}"#, "invalid_request"),
            (#"{"device":"hr_strap","id":"strap2"}"#, "not_allowed"),
        ]
        for (payload, code) in refusals {
            let answer = try await CommandPathTests.request(world, request, payload)
            #expect(CommandPathTests.code(answer) == code, "\(payload): \(String(describing: answer))")
        }

        let answer = try await CommandPathTests.request(
            world, request, #"{"device":"bthome_000003","id":"kitchen","name":"Kitchen","transaction":"a1"}"#)
        #expect(answer?["status"] as? String == "ok", "\(String(describing: answer))")
        #expect(answer?["transaction"] as? String == "a1")
        let data = answer?["data"] as? [String: Any]
        #expect(data?["id"] as? String == "kitchen" && data?["previous_id"] as? String == "bthome_000003")
        let snippet = data?["config"] as? [String: Any]
        #expect((snippet?["match"] as? [String: Any])?["address"] as? String == "C0:FF:EE:00:00:03")
        #expect((snippet?["advertisement"] as? [String: Any])?["decoder"] as? String == "bthome")

        #expect(
            await world.state("kitchen") { $0["temperature"] != nil } != nil, "log: \(world.gateway.log.suffix(3000))")
        let newConfig = await world.recorder.first(on: "homeassistant/sensor/blebridge_kitchen/temperature/config") {
            !$0.payload.isEmpty
        }
        let device = newConfig.flatMap(world.recorder.json)?["device"] as? [String: Any]
        #expect(device?["name"] as? String == "Kitchen")
        #expect(
            await world.recorder.first(on: oldConfig) { $0.payload.isEmpty } != nil,
            "the old entity is removed")
        let left = await world.recorder.first(on: "blebridge/bridge/event") {
            let event = world.recorder.json($0)
            return event?["type"] as? String == "device_left"
                && (event?["data"] as? [String: Any])?["id"] as? String == "bthome_000003"
        }
        let reason = ((left.flatMap(world.recorder.json)?["data"] as? [String: Any])?["reason"] as? String)
        #expect(reason == "adopted as kitchen", "\(String(describing: left.map(\.text)))")
        let listed = await world.recorder.first(on: "blebridge/bridge/devices") { $0.text.contains("\"kitchen\"") }
        #expect(listed != nil && listed?.text.contains("bthome_000003") == false)
        // Each entry says how the gateway came to follow it.
        #expect(
            listed?.text.contains(#""id":"kitchen","name":"Kitchen","origin":"adopted""#) == true,
            "\(listed?.text ?? "")")
        #expect(listed?.text.contains(#""id":"hr_strap","name":"#) == true)
        #expect(listed?.text.contains(#""origin":"configured""#) == true, "\(listed?.text ?? "")")

        // Restart: still kitchen, and bthome_000003 does not come back.
        world.gateway.process.signal(SIGTERM)
        #expect(await world.gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        world.recorder.clear()
        let second = try GatewayProcess(restarting: world.gateway)
        #expect(await world.state("kitchen") { $0["temperature"] != nil } != nil, "log: \(second.log.suffix(3000))")
        #expect(
            await world.recorder.first(on: "blebridge/bridge/devices") { $0.text.contains("\"kitchen\"") } != nil)
        #expect(world.states("bthome_000003").isEmpty, "log: \(second.log.suffix(3000))")

        // Removed over MQTT: kitchen leaves, and with auto_devices on the sensor is an automatic
        // device again at its next advertisement. A configured device is not removed this way.
        let remove = "blebridge/bridge/request/device/remove"
        #expect(
            CommandPathTests.code(try await CommandPathTests.request(world, remove, #"{"device":"hr_strap"}"#))
                == "not_allowed")
        let removed = try await CommandPathTests.request(world, remove, #"{"device":"kitchen"}"#)
        #expect((removed?["data"] as? [String: Any])?["was"] as? String == "adopted", "\(String(describing: removed))")
        #expect(
            await world.state("bthome_000003") { $0["temperature"] != nil } != nil, "log: \(second.log.suffix(3000))")
        #expect(
            await world.recorder.first(on: "homeassistant/sensor/blebridge_kitchen/temperature/config") {
                $0.payload.isEmpty
            } != nil)
        await second.process.stop(grace: .seconds(10))
        await world.shutdown()
    }
}
