import Foundation
import MQTT
import TestSupport
import Testing

/// The Zigbee2MQTT-compatible edges, through the real `blebridge run`, the simulator on a private
/// bus and a real mosquitto: `<device>/set/<name>` with a plain value, empty-payload requests, JSON
/// availability, `bridge/event`, `bridge/logging`, `bridge/request/config/reload` and
/// `bridge/request/restart`.
@Suite(.serialized) struct BridgeEdgesTests {
    static let response = "blebridge/bridge/response/lamp/set"

    /// The answers on `topic` recorded so far, parsed.
    static func answers(_ world: SimulatedWorld, _ topic: String) -> [[String: Any]] {
        world.recorder.on(topic).compactMap(world.recorder.json)
    }

    @Test func plainValuesEmptyRequestsEventsAndJSONAvailability() async throws {
        let world = try await SimulatedWorld(edit: { configuration in
            var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
            mqtt["json_availability"] = true
            configuration["mqtt"] = mqtt
        })
        let recorder = world.recorder
        // Every configured device that is seen joins; the first run adopts its address.
        let joined = await recorder.wait(timeout: .seconds(30)) { messages in
            let events = messages.filter { $0.topic == "blebridge/bridge/event" }.compactMap(recorder.json)
            return events.contains {
                $0["type"] as? String == "device_joined" && ($0["data"] as? [String: Any])?["id"] as? String == "lamp"
            }
                && events.contains {
                    $0["type"] as? String == "device_adopted"
                        && ($0["data"] as? [String: Any])?["id"] as? String == "lamp"
                }
        }
        #expect(
            joined,
            "events: \(recorder.on("blebridge/bridge/event").map { String(decoding: $0.payload, as: UTF8.self) })")
        // Availability in the bridge's JSON form, and discovery reads it with a template.
        let available = await recorder.first(on: "blebridge/lamp/availability", timeout: .seconds(30)) {
            String(decoding: $0.payload, as: UTF8.self) == #"{"state":"online"}"#
        }
        #expect(
            available != nil,
            "availability: \(recorder.on("blebridge/lamp/availability").map { String(decoding: $0.payload, as: UTF8.self) })"
        )
        let discovery = recorder.all.first { $0.topic.hasPrefix("homeassistant/switch/") && $0.topic.contains("lamp") }
        let entries = discovery.flatMap(recorder.json)?["availability"] as? [[String: Any]] ?? []
        #expect(
            entries.contains {
                $0["topic"] as? String == "blebridge/lamp/availability"
                    && $0["value_template"] as? String == "{{ value_json.state }}"
            })

        // `set/<name>` with a plain value: executed and answered like the JSON form.
        try await recorder.publish("blebridge/lamp/set/brightness", "55")
        let written = await recorder.first(on: Self.response, timeout: .seconds(30)) {
            recorder.json($0)?["status"] as? String == "ok"
        }
        #expect(written != nil, "log: \(world.gateway.log.suffix(2000))")
        let brightness = try await world.simulator.characteristicValue(
            address: SimulatedWorld.lamp, uuid: SimulatedWorld.brightness)
        #expect(brightness == [55])
        // A value the command cannot take, and a name that is not a command: clear errors, logged.
        recorder.clear()
        try await recorder.publish("blebridge/lamp/set/brightness", "ON")
        try await recorder.publish("blebridge/lamp/set/colour", "red")
        #expect(await recorder.wait(timeout: .seconds(20)) { $0.filter { $0.topic == Self.response }.count == 2 })
        let refusals = Self.answers(world, Self.response)
        #expect(
            refusals.map { ($0["error"] as? [String: Any])?["code"] as? String } == ["invalid_value", "not_allowed"],
            "\(refusals)")
        #expect(
            (refusals.last?["error"] as? [String: Any])?["message"] as? String
                == "'colour' is not a writable command of lamp")
        #expect(world.gateway.log.contains("command refused topic=blebridge/lamp/set/colour code=not_allowed"))

        // An empty payload on a request without parameters.
        try await recorder.publish("blebridge/bridge/request/devices", "")
        let devices = await recorder.first(on: "blebridge/bridge/response/devices", timeout: .seconds(20))
        #expect(devices.flatMap(recorder.json)?["status"] as? String == "ok")
        await world.shutdown()
    }

    @Test func reloadAndRestartOverMQTTAreAnsweredAndCarriedOut() async throws {
        let world = try await SimulatedWorld()
        let recorder = world.recorder
        #expect(
            await recorder.first(on: "blebridge/bridge/state", timeout: .seconds(30)) {
                recorder.json($0)?["state"] as? String == "online"
            } != nil)
        // Reload: the beacon removed (a device_left event) and an MQTT setting changed (a warning,
        // published on bridge/logging as well as logged).
        try world.gateway.rewrite { configuration in
            configuration["devices"] = (configuration["devices"] as? [[String: Any]] ?? []).filter {
                $0["id"] as? String != "ibeacon"
            }
            var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
            mqtt["keepalive"] = "45s"
            configuration["mqtt"] = mqtt
        }
        try await recorder.publish("blebridge/bridge/request/config/reload", #"{"transaction":"r-1"}"#)
        let reloaded = await recorder.first(on: "blebridge/bridge/response/config/reload", timeout: .seconds(20))
        #expect(reloaded.flatMap(recorder.json)?["status"] as? String == "ok")
        #expect(reloaded.flatMap(recorder.json)?["transaction"] as? String == "r-1")
        let left = await recorder.first(on: "blebridge/bridge/event", timeout: .seconds(10)) {
            recorder.json($0)?["type"] as? String == "device_left"
        }
        #expect((left.flatMap(recorder.json)?["data"] as? [String: Any])?["id"] as? String == "ibeacon")
        let warning = await recorder.first(on: "blebridge/bridge/logging", timeout: .seconds(10)) {
            (recorder.json($0)?["message"] as? String)?.contains("apply only after a restart") == true
        }
        #expect(warning.flatMap(recorder.json)?["level"] as? String == "warning")
        // A file that does not load: answered with the reason; the running configuration stays.
        try "{ not json".write(toFile: world.gateway.configPath, atomically: true, encoding: .utf8)
        recorder.clear()
        try await recorder.publish("blebridge/bridge/request/config/reload", "")
        let refused = await recorder.first(on: "blebridge/bridge/response/config/reload", timeout: .seconds(20))
        #expect(refused.flatMap(recorder.json)?["status"] as? String == "error")
        #expect(
            ((refused.flatMap(recorder.json)?["error"] as? [String: Any])?["message"] as? String)?.contains(
                "invalid JSON") == true,
            "\(String(describing: refused.flatMap(recorder.json)))")

        // Restart: answered, offline, online again, in the same process.
        // A good file back (rewrite() cannot parse the broken one).
        let good = try GatewayProcess.repositoryConfiguration()
        var configuration = good
        var mqtt = configuration["mqtt"] as? [String: Any] ?? [:]
        mqtt["response_topic_prefixes"] = ["e2e"]
        configuration["mqtt"] = mqtt
        try JSONSerialization.data(withJSONObject: configuration).write(
            to: URL(fileURLWithPath: world.gateway.configPath))
        // No wait for the connections to settle: a connect still in flight at the restart is
        // disconnected by the stop (BLELink.stop(until:)), so the device is seen again.
        let pid = world.gateway.process.processIdentifier
        recorder.clear()
        try await recorder.publish("blebridge/bridge/request/restart", "")
        let answered = await recorder.first(on: "blebridge/bridge/response/restart", timeout: .seconds(20))
        #expect(answered.flatMap(recorder.json)?["status"] as? String == "ok")
        let cycled = await recorder.wait(timeout: .seconds(40)) { messages in
            let states = messages.filter { $0.topic == "blebridge/bridge/state" }.compactMap {
                recorder.json($0)?["state"] as? String
            }
            guard let offline = states.firstIndex(of: "offline") else { return false }
            return states[offline...].contains("online")
        }
        #expect(cycled, "log: \(world.gateway.log.suffix(3000))")
        #expect(world.gateway.process.isRunning)
        #expect(world.gateway.process.processIdentifier == pid)
        #expect(world.gateway.log.contains("restarting"))
        // The restarted gateway works: once it has the lamp again, a command is executed.
        let lampBack = await recorder.first(on: "blebridge/lamp/availability", timeout: .seconds(30)) {
            $0.payload == Array("online".utf8)
        }
        #expect(lampBack != nil, "log: \(world.gateway.process.standardError.suffix(5000))")
        try await recorder.publish("blebridge/lamp/set/power", "ON")
        let power = await recorder.first(on: Self.response, timeout: .seconds(30)) {
            recorder.json($0)?["status"] as? String == "ok"
        }
        #expect(
            power != nil,
            "answers: \(Self.answers(world, Self.response)); log: \(world.gateway.process.standardError.suffix(3000))")
        await world.shutdown()
    }
}
