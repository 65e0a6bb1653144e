import Foundation
import MQTT
import TestSupport
import Testing

/// SIGHUP reload and Home Assistant discovery life cycle, against real mosquitto and the binary.
@Suite(.serialized) struct ReloadAndDiscoveryTests {
    static let lampPower = "homeassistant/switch/blebridge_lamp/power/config"

    @Test func discoveryIsResentAFewSecondsAfterHomeAssistantComesOnline() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("homeassistant/#")
        try await recorder.subscribe("blebridge/bridge/state")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        #expect(await recorder.first(on: Self.lampPower) != nil, "no discovery; log: \(gateway.log)")
        let first = try #require(recorder.on(Self.lampPower).first)
        let config = try #require(recorder.json(first))
        #expect(config["command_topic"] as? String == "blebridge/lamp/set")
        #expect(config["availability_mode"] as? String == "all")
        #expect((config["availability"] as? [[String: Any]])?.count == 2)
        // The gateway's subscription to homeassistant/status reaches the broker before its retained
        // `online` (MQTTLifecycle queues the SUBSCRIBEs before it reports the connection), and the
        // startup announcement publishes `online` before the discovery already received above.
        let online = await recorder.first(on: "blebridge/bridge/state") { $0.text.contains("online") }
        #expect(online != nil, "no online state; log: \(gateway.log)")
        recorder.clear()
        let announced = ContinuousClock.now
        try await recorder.client.publish(MQTTMessage(topic: "homeassistant/status", text: "online", qos: .atLeastOnce))
        let resent = await recorder.first(on: Self.lampPower, timeout: .seconds(15))
        let delay = ContinuousClock.now - announced
        #expect(resent != nil)
        #expect(delay >= .seconds(4), "discovery re-sent after \(delay); Home Assistant needs a few seconds")
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        await recorder.close()
        await broker.stop()
    }

    /// Home Assistant turned on by SIGHUP: discovery at once (fields seen while it was off
    /// included), and `homeassistant/status` subscribed at once, so Home Assistant's `online`
    /// brings discovery again without waiting for the next broker connection.
    @Test func sighupTurningHomeAssistantOnAnnouncesAndSubscribesItsStatusAtOnce() async throws {
        let heartRate = "homeassistant/sensor/blebridge_hr_strap/heart_rate/config"
        let world = try await SimulatedWorld { $0["homeassistant"] = ["enabled": false] }
        let reading = await world.state("hr_strap", timeout: .seconds(30)) { $0["heart_rate"] != nil }
        #expect(reading != nil, "no strap reading; log: \(world.gateway.log.suffix(2000))")
        #expect(world.recorder.on(heartRate).isEmpty)
        try world.gateway.rewrite { $0["homeassistant"] = ["enabled": true] }
        world.gateway.process.signal(SIGHUP)
        let announced = await world.recorder.first(on: heartRate, timeout: .seconds(15)) { !$0.payload.isEmpty }
        #expect(announced != nil, "no discovery after enabling; log: \(world.gateway.log.suffix(2000))")
        // The status subscription is in place before the discovery goes out.
        world.recorder.clear()
        try await world.recorder.publish("homeassistant/status", "online")
        let resent = await world.recorder.first(on: heartRate, timeout: .seconds(15)) { !$0.payload.isEmpty }
        #expect(resent != nil, "discovery not re-sent after homeassistant/status online")
        // Turned off again: the status topic is unsubscribed.
        try world.gateway.rewrite { $0["homeassistant"] = ["enabled": false] }
        world.gateway.process.signal(SIGHUP)
        let unsubscribed = await waitUntil(timeout: .seconds(20)) {
            world.gateway.log.contains("unsubscribed filter=homeassistant/status")
        }
        #expect(unsubscribed, "log: \(world.gateway.log.suffix(2000))")
        #expect(world.gateway.process.isRunning)
        await world.shutdown()
    }

    /// A characteristic dropped from a device's `subscribe` list: SIGHUP deletes the entities
    /// only it produced (empty retained config); the device's other entities stay.
    @Test func sighupDeletesTheEntitiesOfACharacteristicDroppedFromSubscribe() async throws {
        let (world, battery, heartRate) = try await Self.worldWithStrapEntities()
        try Self.dropBatteryFromStrap(world)
        world.gateway.process.signal(SIGHUP)
        let deleted = await world.recorder.first(on: battery, timeout: .seconds(20)) { $0.payload.isEmpty }
        #expect(deleted != nil, "battery entity not deleted; log: \(world.gateway.log.suffix(2000))")
        #expect(!world.recorder.on(heartRate).contains { $0.payload.isEmpty })
        // The gateway logs the removal after the broker acknowledged it and its state database
        // recorded it, so the empty config can reach the recorder before the line is written.
        #expect(
            await waitUntil {
                world.gateway.log.contains("removed Home Assistant entities of characteristics no longer read")
            }, "log: \(world.gateway.log.suffix(2000))")
        await world.shutdown()
    }

    /// The same across a restart: what produced each entity is remembered in the state database,
    /// so the entities of a characteristic dropped while the gateway was down go at start.
    @Test func aRestartDeletesTheEntitiesOfACharacteristicDroppedMeanwhile() async throws {
        let (world, battery, heartRate) = try await Self.worldWithStrapEntities()
        world.gateway.process.signal(SIGTERM)
        #expect(await world.gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        try Self.dropBatteryFromStrap(world)
        let restarted = try GatewayProcess(restarting: world.gateway)
        let deleted = await world.recorder.first(on: battery, timeout: .seconds(20)) { $0.payload.isEmpty }
        #expect(deleted != nil, "battery entity not deleted at start; log: \(restarted.log.suffix(2000))")
        #expect(!world.recorder.on(heartRate).contains { $0.payload.isEmpty })
        await restarted.process.stop(grace: .seconds(10))
        await world.shutdown()
    }

    @Test func sighupRemovesDevicesLeavingTheConfigurationAndKeepsRunning() async throws {
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("homeassistant/#")
        try await recorder.subscribe("blebridge/bridge/#")
        let gateway = try GatewayProcess(brokerURL: broker.url)
        #expect(await recorder.first(on: Self.lampPower) { !$0.payload.isEmpty } != nil, "log: \(gateway.log)")
        // The discovery goes out before the gateway has finished starting, and a SIGHUP while it
        // starts is not a reload ("SIGHUP while starting; the configuration is not reloaded"):
        // the reload waits for "gateway running".
        #expect(await waitUntil { gateway.log.contains("gateway running") }, "log: \(gateway.log)")
        try gateway.rewrite { configuration in
            var devices = configuration["devices"] as? [[String: Any]] ?? []
            devices.removeAll { $0["id"] as? String == "lamp" }
            configuration["devices"] = devices
            if var commands = configuration["commands"] as? [String: Any] {
                commands["raw_gatt"] = ["enabled": false, "allow": [Any]()]
                configuration["commands"] = commands
            }
        }
        gateway.process.signal(SIGHUP)
        // The lamp's entities are deleted (empty retained config) and bridge/info no longer lists it.
        #expect(await recorder.first(on: Self.lampPower) { $0.payload.isEmpty } != nil, "log: \(gateway.log)")
        let info = await recorder.first(on: "blebridge/bridge/info") { !$0.text.contains("\"lamp\"") }
        #expect(info != nil)
        // The lamp is now unknown to the command gate.
        try await recorder.publish("blebridge/lamp/set", #"{"power":true,"transaction":"gone"}"#)
        let reply = await recorder.first(on: "blebridge/bridge/response/lamp/set") { $0.text.contains("gone") }
        #expect(reply?.text.contains("unknown_device") == true)
        #expect(gateway.process.isRunning)
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        await recorder.close()
        await broker.stop()
    }

    /// Waits until every topic in `topics` carried a non-empty (announcing) payload.
    /// A world whose strap's battery and heart-rate entities have been announced; their topics.
    static func worldWithStrapEntities() async throws -> (SimulatedWorld, battery: String, heartRate: String) {
        let battery = "homeassistant/sensor/blebridge_hr_strap/battery/config"
        let heartRate = "homeassistant/sensor/blebridge_hr_strap/heart_rate/config"
        let world = try await SimulatedWorld()
        #expect(
            await announced([battery, heartRate], in: world),
            "strap entities not announced; log: \(world.gateway.log.suffix(2000))")
        return (world, battery, heartRate)
    }

    static func announced(_ topics: [String], in world: SimulatedWorld) async -> Bool {
        await world.recorder.wait(timeout: .seconds(30)) { messages in
            topics.allSatisfy { topic in messages.contains { $0.topic == topic && !$0.payload.isEmpty } }
        }
    }

    /// Rewrites the configuration without the strap's `battery_level` subscription.
    static func dropBatteryFromStrap(_ world: SimulatedWorld) throws {
        try world.gateway.rewrite { configuration in
            var devices = configuration["devices"] as? [[String: Any]] ?? []
            for index in devices.indices where devices[index]["id"] as? String == "hr_strap" {
                let subscribe = devices[index]["subscribe"] as? [[String: Any]] ?? []
                devices[index]["subscribe"] = subscribe.filter { $0["characteristic"] as? String != "battery_level" }
            }
            configuration["devices"] = devices
        }
    }
}
