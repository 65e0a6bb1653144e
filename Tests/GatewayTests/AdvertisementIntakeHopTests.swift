import BlueZ
import BlueZSimulator
import Bluetooth
import Decoders
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Gateway

/// What the advertisement intake asks of the gateway per advertisement (issue 20: each question is
/// a hop onto the gateway's actor). The gateway is told a device was seen once per interval
/// (its last-seen time and RSSI), not per advertisement; the RSSI of every advertisement goes to it
/// only for room presence, and shared-broker mode's election hears every one.
@Suite(.timeLimit(.minutes(2))) struct AdvertisementIntakeHopTests {
    static let sensor = "C0:FF:EE:00:00:03"

    /// One passive BTHome sensor with new data every 50 ms.
    static let scenario = #"""
        {"name": "fast-bthome", "devices": [{
          "id": "bthome", "address": "\#(sensor)", "name": "BTHome SIM", "connectable": false, "rssi": -72,
          "advertisement": {
            "service_data": [{"uuid": "fcd2", "generator": {"kind": "bthome", "base": 19.5, "drift": 1.0, "humidity": 52, "start": 1}}],
            "update_interval": "50ms"
          }}]}
        """#

    static func json(_ extra: String = "") -> String {
        #"{\#(extra)"devices": [{"id": "bthome", "match": {"address": "\#(sensor)"}, "connection": "passive", "#
            + #""advertisement": {"decoder": "bthome"}}]}"#
    }

    /// What the link asked of its host, and the advertisements decoded.
    final class Counts: Sendable {
        let seen = Atomic<Int>(0)
        let heard = Atomic<Int>(0)
        let decoded = Atomic<Int>(0)
    }

    /// A link to the simulated sensor on `clock`, with `json`'s configuration; `body` gets the
    /// counts.
    func withLink(json: String, clock: ManualClock, _ body: (Counts) async throws -> Void) async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = BlueZSimulator(scenario: try Scenario.decode(Data(Self.scenario.utf8)))
        try await simulator.start(busAddress: bus.address)
        let directory = try TemporaryDirectory(prefix: "intake-hops")
        let gateway = try await unstartedGateway(in: directory, json: json)
        let (configuration, pipeline) = await (gateway.model.configuration, gateway.pipeline)
        let asked = Counts()
        var decoders = DecoderRegistry.standard
        decoders.register(ObservedBTHomeDecoder { asked.decoded.add(1, ordering: .relaxed) })
        let host = BLELink.Host(
            report: { event, _ in
                if case .heard = event { asked.heard.add(1, ordering: .relaxed) }
            },
            seen: { _, _, _, _ in
                asked.seen.add(1, ordering: .relaxed)
                return true
            }, assignMatch: { _, template in template }, addAutoDevice: { _, _, _ in nil },
            knownPeripherals: { [] }, remember: { _ in })
        let link = BLELink(
            host: host, configuration: configuration, busAddress: bus.address, pipeline: pipeline, clock: clock,
            thread: try BlueZBusThread(), decoders: decoders)
        await link.start()
        try await body(asked)
        await link.stop(until: .now + .seconds(1))
        await gateway.stop()
        await simulator.stop()
        await bus.stop()
    }

    /// Waits until the decoder counted `count` advertisements.
    func decoded(_ count: Int, _ counts: Counts) async -> Bool {
        await waitUntil(timeout: .seconds(30)) { counts.decoded.load(ordering: .relaxed) >= count }
    }

    @Test func theGatewayIsToldOfADeviceOncePerSecondAndHearsNoRSSIWithoutPresence() async throws {
        let clock = ManualClock()
        try await withLink(json: Self.json(), clock: clock) { asked in
            #expect(await self.decoded(6, asked), "the sensor's advertisements were not decoded")
            // The intake's clock stood still: one question for six advertisements or more.
            #expect(asked.seen.load(ordering: .relaxed) == 1)
            clock.advance(by: .seconds(1))
            let now = asked.decoded.load(ordering: .relaxed)
            #expect(await self.decoded(now + 3, asked))
            #expect(asked.seen.load(ordering: .relaxed) == 2)
            #expect(asked.heard.load(ordering: .relaxed) == 0)
        }
    }

    @Test func presenceHearsEveryAdvertisementAndSharedBrokerModeIsToldOfEvery() async throws {
        let clock = ManualClock()
        let json = Self.json(#""gateway_id": "gw-a", "mqtt": {"shared_broker": true}, "presence": {"room": "lab"}, "#)
        try await withLink(json: json, clock: clock) { asked in
            #expect(await self.decoded(6, asked), "the sensor's advertisements were not decoded")
            // Each advertisement asks before it is decoded, and reports after.
            #expect(asked.seen.load(ordering: .relaxed) >= 6)
            #expect(await waitUntil(timeout: .seconds(30)) { asked.heard.load(ordering: .relaxed) >= 6 })
        }
    }
}
