import Configuration
import Foundation
import Gateway
import Outbox
import TestSupport
import Testing

@Suite struct DiscoverySourcesTests {
    static func topic(_ device: String, _ field: String) -> String {
        "homeassistant/sensor/blebridge_\(device)/\(field)/config"
    }

    static func configuration(_ devices: String, raw: String = #"{"enabled": false}"#) throws -> BridgeConfiguration {
        try ConfigurationLoader().decode(
            Data(#"{"devices": \#(devices), "commands": {"raw_gatt": \#(raw)}}"#.utf8), file: "test.json")
    }

    static let strap =
        #"{"id": "strap", "match": {"name_prefix": "S"}, "connection": "keep_connected", "subscribe": [{"characteristic": "heart_rate_measurement"}]}"#

    @Test func onlyEntitiesOfCharacteristicsNoLongerReadAreDropped() throws {
        let configuration = try Self.configuration("[\(Self.strap)]")
        var sources = DiscoverySources()
        let battery = Self.topic("strap", "battery")
        let heartRate = Self.topic("strap", "heart_rate")
        let old = Self.topic("strap", "energy_expended")
        let first = sources.record([battery], device: "strap", source: "2a19")
        let again = sources.record([battery], device: "strap", source: "2a19")
        let other = sources.record([heartRate], device: "strap", source: "2a37")
        #expect(first && !again && other)
        let announced = ["strap": [battery, heartRate, old]]
        // The battery came only from 2a19, no longer subscribed; the heart rate's source is; the
        // topic without a recorded source (an earlier version announced it) is kept.
        #expect(
            sources.droppedTopics(announced: announced, configuration: configuration, live: []) == ["strap": [battery]])
        // Announced now by something else: kept.
        #expect(sources.droppedTopics(announced: announced, configuration: configuration, live: [battery]).isEmpty)
        // Also produced by an advertisement: kept.
        var both = sources
        _ = both.record([battery], device: "strap", source: nil)
        #expect(both.droppedTopics(announced: announced, configuration: configuration, live: []).isEmpty)
        // Forgotten once deleted.
        var deleted = sources
        let forgotten = deleted.forget([battery], device: "strap")
        #expect(forgotten)
        #expect(deleted.droppedTopics(announced: announced, configuration: configuration, live: []).isEmpty)
    }

    @Test func aCharacteristicStillReadOtherwiseKeepsItsEntities() throws {
        var sources = DiscoverySources()
        let battery = Self.topic("strap", "battery")
        _ = sources.record([battery], device: "strap", source: "2a19")
        let announced = ["strap": [battery]]
        // A command that reads it.
        let command =
            #"{"id": "strap", "match": {"name_prefix": "S"}, "connection": "keep_connected", "commands": [{"name": "level", "characteristic": "2a19", "operations": ["read"], "format": "uint8"}]}"#
        #expect(
            sources.droppedTopics(announced: announced, configuration: try Self.configuration("[\(command)]"), live: [])
                .isEmpty)
        // A raw GATT allowlist entry that reads it, while raw GATT is on (off: dropped).
        let allow =
            #"{"enabled": true, "allow": [{"device": "strap", "characteristic": "2a19", "operations": ["read"]}]}"#
        #expect(
            sources.droppedTopics(
                announced: announced, configuration: try Self.configuration("[\(Self.strap)]", raw: allow), live: []
            ).isEmpty)
        #expect(
            sources.droppedTopics(
                announced: announced,
                configuration: try Self.configuration(
                    "[\(Self.strap)]", raw: allow.replacingOccurrences(of: "true", with: "false")), live: [])
                == ["strap": [battery]])
        // A device decoding advertisements may produce any name.
        let advertised =
            #"{"id": "strap", "match": {"name_prefix": "S"}, "connection": "keep_connected", "subscribe": [{"characteristic": "heart_rate_measurement"}], "advertisement": {"decoder": "bthome"}}"#
        #expect(
            sources.droppedTopics(
                announced: announced, configuration: try Self.configuration("[\(advertised)]"), live: []
            )
            .isEmpty)
    }

    /// A remaining subscription takes over a plain name once its holder is dropped.
    @Test func aNameARemainingSubscriptionCanTakeIsKept() throws {
        let intermediate =
            #"{"id": "thermo", "match": {"name_prefix": "T"}, "connection": "keep_connected", "subscribe": [{"characteristic": "intermediate_temperature"}]}"#
        var sources = DiscoverySources()
        let plain = Self.topic("thermo", "temperature")
        let qualified = Self.topic("thermo", "intermediate_temperature")
        _ = sources.record([plain], device: "thermo", source: "2a1c")
        let announced = ["thermo": [plain, qualified]]
        let configuration = try Self.configuration("[\(intermediate)]")
        // Intermediate Temperature (2a1e) never delivered yet: nothing proves it produces `temperature`.
        #expect(
            sources.droppedTopics(announced: announced, configuration: configuration, live: []) == ["thermo": [plain]])
        // It did (as `intermediate_temperature`): with 2a1c gone it gets the plain name, kept.
        _ = sources.record([qualified], device: "thermo", source: "2a1e")
        #expect(sources.droppedTopics(announced: announced, configuration: configuration, live: []).isEmpty)
        // A subscribed characteristic that owns the name keeps it too.
        let owner =
            #"{"id": "thermo", "match": {"name_prefix": "T"}, "connection": "keep_connected", "subscribe": [{"characteristic": "temperature"}]}"#
        var other = DiscoverySources()
        _ = other.record([plain], device: "thermo", source: "2a1c")
        #expect(
            other.droppedTopics(announced: announced, configuration: try Self.configuration("[\(owner)]"), live: [])
                .isEmpty)
    }

    @Test func sourcesSurviveReopeningAndAreForgottenWithTheDevice() async throws {
        let directory = try TemporaryDirectory(prefix: "discovery-sources")
        let path = directory.file("blebridge.sqlite").path
        var sources = DiscoverySources()
        _ = sources.record([Self.topic("strap", "battery")], device: "strap", source: "2a19")
        _ = sources.record([Self.topic("strap", "battery")], device: "strap", source: nil)
        _ = sources.record(
            [Self.topic("lamp", "power")], device: "lamp", source: "6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")
        do {
            let state = GatewayStateStore(store: try await OutboxStore(path: path))
            try await state.setDiscoverySources(sources, deviceID: "strap")
            try await state.setDiscoverySources(sources, deviceID: "lamp")
            await state.store.close()
        }
        let reopened = GatewayStateStore(store: try await OutboxStore(path: path))
        #expect(try await reopened.discoverySources() == sources)
        try await reopened.forget(deviceID: "lamp")
        #expect(try await reopened.discoverySources().devices.keys.sorted() == ["strap"])
        await reopened.store.close()
    }
}
