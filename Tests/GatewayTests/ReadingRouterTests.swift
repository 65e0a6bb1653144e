import Decoders
import Foundation
import Gateway
import JSON
import Outbox
import Testing

@Suite struct ReadingRouterTests {
    func router(raw: Bool = false, discovery: Bool = true) -> ReadingRouter {
        let topics = TopicContract()
        return ReadingRouter(
            topics: topics, qos: .atLeastOnce, rawTopics: raw,
            discoveryBuilder: discovery ? DiscoveryBuilder(topics: topics, gatewayID: "blebridge") : nil,
            devices: [DiscoveryDevice(id: "hr_strap", name: "Chest strap")])
    }

    @Test func readingsBecomeOrderedOutboxEntriesWithTheSampleTime() {
        var router = router(raw: true)
        let time = Date(timeIntervalSince1970: 100)
        let output = router.route(
            device: "hr_strap",
            fields: [DecodedField(name: "heart_rate", value: .int(72), unit: "bpm", kind: .measurement)],
            raw: ("2a37", [0x00, 0x48]), rssi: -61, sampleTime: time)
        #expect(output.entries.map(\.topic) == ["blebridge/hr_strap", "blebridge/hr_strap/raw/2a37"])
        #expect(output.entries.allSatisfy { $0.sampleTime == time && $0.stream == "hr_strap" && !$0.retain })
        #expect(
            String(decoding: output.entries[0].payload, as: UTF8.self)
                == #"{"heart_rate":72,"rssi":-61,"ts":"1970-01-01T00:01:40.000Z"}"#)
        #expect(
            String(decoding: output.entries[1].payload, as: UTF8.self)
                == #"{"value":"0048","ts":"1970-01-01T00:01:40.000Z"}"#)
        #expect(
            output.discovery.map(\.topic).sorted() == [
                "homeassistant/sensor/blebridge_hr_strap/heart_rate/config",
                "homeassistant/sensor/blebridge_hr_strap/rssi/config",
            ])
    }

    @Test func discoveryIsAnnouncedOnceAndReplayedOnDemand() throws {
        var router = router()
        _ = router.route(
            device: "hr_strap", fields: [DecodedField(name: "heart_rate", value: .int(72), kind: .measurement)],
            sampleTime: Date())
        let second = router.route(
            device: "hr_strap",
            fields: [
                DecodedField(name: "heart_rate", value: .int(73), kind: .measurement),
                DecodedField(name: "battery", value: .int(88), unit: "%", kind: .battery),
                DecodedField(name: "rr_intervals", value: .array([.double(0.8)]), unit: "s"),
            ],
            sampleTime: Date())
        #expect(second.discovery.map(\.topic) == ["homeassistant/sensor/blebridge_hr_strap/battery/config"])
        #expect(router.allDiscovery().count == 2)
        #expect(try JSONParser().parse(router.state(of: "hr_strap")?.payload ?? [])["heart_rate"] == .int(73))
    }

    @Test func noDiscoveryWhenDisabledAndUnknownDevicesAreNotAnnounced() {
        var disabled = router(discovery: false)
        #expect(
            disabled.route(device: "hr_strap", fields: [DecodedField(name: "x", value: .int(1))], sampleTime: Date())
                .discovery.isEmpty)
        var enabled = router()
        let output = enabled.route(
            device: "other", fields: [DecodedField(name: "x", value: .int(1))], sampleTime: Date())
        #expect(output.entries.count == 1)
        #expect(output.discovery.isEmpty)
    }
}
