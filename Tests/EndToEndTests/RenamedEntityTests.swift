import Foundation
import Gateway
import MQTT
import Outbox
import TestSupport
import Testing

/// Home Assistant entities announced by an earlier version under field names the gateway no
/// longer uses are deleted at start; entities whose fields have simply not been decoded yet stay.
/// No Bluetooth: the state database the previous run left is seeded directly.
@Suite(.serialized) struct RenamedEntityTests {
    static let node = "homeassistant/sensor/blebridge_thermometer"
    /// The old name of the Intermediate Temperature field (now `intermediate_temperature`).
    static let renamed = "\(node)/temperature_intermediate_temperature/config"
    /// A current name, announced before, not decoded yet in this run.
    static let current = "\(node)/humidity/config"
    static let lampPower = "homeassistant/switch/blebridge_lamp/power/config"

    @Test func aRestartClearsEntitiesUnderOldFieldNamesOnly() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "renamed-entities")
        // What the previous run left: both entities retained on the broker and remembered as announced.
        let seeder = try await MQTTRecorder(url: broker.url)
        for topic in [Self.renamed, Self.current] {
            try await seeder.client.publish(
                MQTTMessage(topic: topic, text: #"{"name":"seeded"}"#, qos: .atLeastOnce, retain: true))
        }
        await seeder.close()
        let path = directory.file("outbox.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            let state = GatewayStateStore(store: store)
            try await state.setAnnouncedDiscovery([Self.current, Self.renamed], deviceID: "thermometer")
            // The thermometer connected in that run: its services (all with assigned names) are known.
            try await state.remember(
                KnownPeripheral(
                    deviceID: "thermometer", address: "C0:FF:EE:00:00:02", addressType: "public",
                    services: ["1809", "181a", "180f"], subscriptions: ["2a1c", "2a1e"], lastSeen: Date()))
            await store.close()
        }

        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("homeassistant/#")
        let gateway = try GatewayProcess(brokerURL: broker.url, directory: directory)
        let cleared = await recorder.first(on: Self.renamed) { $0.payload.isEmpty }
        #expect(cleared != nil, "log: \(gateway.log.suffix(2000))")
        #expect(await recorder.first(on: Self.lampPower) { !$0.payload.isEmpty } != nil)
        #expect(!recorder.on(Self.current).contains { $0.payload.isEmpty }, "a current entity was deleted")
        gateway.process.signal(SIGTERM)
        #expect(await gateway.process.waitForExit(timeout: .seconds(15)) == 0)
        #expect(gateway.log.contains("removed Home Assistant entities under field names no longer used"))

        // Gone from the broker: a new subscriber gets the current entity retained, not the old one
        // (retained messages of the first subscription arrive before those of the second).
        let late = try await MQTTRecorder(url: broker.url)
        try await late.subscribe("\(Self.node)/#")
        try await late.subscribe(Self.lampPower)
        #expect(await late.first(on: Self.lampPower) != nil)
        #expect(late.on(Self.current).count == 1)
        #expect(late.on(Self.renamed).isEmpty)
        await late.close()
        // And forgotten: the state database no longer lists it.
        let store = try await OutboxStore(path: path)
        let announced = try await GatewayStateStore(store: store).announcedDiscovery()
        await store.close()
        #expect(announced["thermometer"] == [Self.current])
        await recorder.close()
        await broker.stop()
    }
}
