import Configuration
import Decoders
import Foundation
import Testing
import Timekeeping

@testable import Gateway

/// `only_on_change` and `min_interval`, with time moved by hand.
@Suite struct ReadingThrottleTests {
    typealias Throttle = ReadingThrottle<ManualClock.Instant>

    /// The throttle behind a reference, so `#expect` can call its mutating `admit`.
    final class Box {
        var throttle: Throttle
        init(_ policies: [String: Throttle.Policy]) { throttle = Throttle(policies: policies) }
        func admit(device: String, source: String?, fields: [DecodedField], now: ManualClock.Instant) -> Bool {
            throttle.admit(device: device, source: source, fields: fields, now: now)
        }
    }

    static func fields(_ temperature: Double, packet: Int64) -> [DecodedField] {
        [
            DecodedField(name: "packet_id", value: .int(packet)),
            DecodedField(name: "temperature", value: .double(temperature)),
        ]
    }

    /// A second press like the first is a new press: neither setting holds back a reading with an event.
    @Test func aReadingWithAnEventIsNeverHeldBack() {
        let clock = ManualClock()
        let throttle = Box(["b": .init(onlyOnChange: true, minInterval: .seconds(60))])
        func press(_ packet: Int64) -> [DecodedField] {
            [
                DecodedField(name: "packet_id", value: .int(packet)),
                DecodedField(name: "button", value: .string("press"), kind: .event("button", types: ["press"])),
            ]
        }
        #expect(throttle.admit(device: "b", source: nil, fields: press(1), now: clock.now))
        #expect(throttle.admit(device: "b", source: nil, fields: press(2), now: clock.now))
        #expect(!throttle.admit(device: "b", source: nil, fields: Self.fields(20.5, packet: 3), now: clock.now))
    }

    @Test func onlyOnChangeDropsReadingsWhoseValuesAreUnchanged() {
        let clock = ManualClock()
        let throttle = Box(["t": .init(onlyOnChange: true)])
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(20.5, packet: 1), now: clock.now))
        #expect(
            !throttle.admit(device: "t", source: nil, fields: Self.fields(20.5, packet: 2), now: clock.now),
            "a new packet id alone is no change")
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(20.6, packet: 3), now: clock.now))
        #expect(
            throttle.admit(device: "t", source: "2a19", fields: Self.fields(20.6, packet: 3), now: clock.now),
            "each source is compared with its own last reading")
        #expect(
            throttle.admit(device: "other", source: nil, fields: Self.fields(20.6, packet: 3), now: clock.now),
            "devices without a policy publish everything")
        #expect(throttle.admit(device: "other", source: nil, fields: Self.fields(20.6, packet: 3), now: clock.now))
    }

    @Test func minIntervalHoldsBackReadingsUntilTheIntervalHasPassed() {
        let clock = ManualClock()
        let throttle = Box(["t": .init(minInterval: .seconds(30))])
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(20, packet: 1), now: clock.now))
        clock.advance(by: .seconds(29))
        #expect(!throttle.admit(device: "t", source: nil, fields: Self.fields(21, packet: 2), now: clock.now))
        clock.advance(by: .seconds(1))
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(22, packet: 3), now: clock.now))
        clock.advance(by: .seconds(10))
        #expect(
            !throttle.admit(device: "t", source: nil, fields: Self.fields(23, packet: 4), now: clock.now),
            "measured from the last published reading")
    }

    @Test func bothTogetherNeedAChangeAndTheInterval() {
        let clock = ManualClock()
        let throttle = Box(["t": .init(onlyOnChange: true, minInterval: .seconds(5))])
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(20, packet: 1), now: clock.now))
        clock.advance(by: .seconds(60))
        #expect(!throttle.admit(device: "t", source: nil, fields: Self.fields(20, packet: 2), now: clock.now))
        #expect(throttle.admit(device: "t", source: nil, fields: Self.fields(21, packet: 3), now: clock.now))
        clock.advance(by: .seconds(1))
        #expect(!throttle.admit(device: "t", source: nil, fields: Self.fields(22, packet: 4), now: clock.now))
    }

    @Test func policiesComeFromTheConfigurationAndAReloadForgetsDroppedOnes() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(
                #"""
                {"devices": [
                  {"id": "a", "match": {"address": "C0:FF:EE:00:00:01"}, "only_on_change": true},
                  {"id": "b", "match": {"address": "C0:FF:EE:00:00:02"}, "min_interval": "30s", "deduplicate": false},
                  {"id": "c", "match": {"address": "C0:FF:EE:00:00:03"}}
                ]}
                """#.utf8))
        let policies = Throttle.policies(configuration)
        #expect(policies == ["a": .init(onlyOnChange: true), "b": .init(minInterval: .seconds(30))])
        #expect(configuration.device(id: "a")?.deduplicate == true, "BTHome de-duplication is on by default")
        #expect(configuration.device(id: "b")?.deduplicate == false)
        let clock = ManualClock()
        let throttle = Box(policies)
        #expect(throttle.admit(device: "a", source: nil, fields: Self.fields(1, packet: 1), now: clock.now))
        throttle.throttle.update(policies: [:])
        #expect(throttle.admit(device: "a", source: nil, fields: Self.fields(1, packet: 1), now: clock.now))
        // Without a policy every reading passes whatever is remembered; that the reading above
        // was forgotten shows when the policy comes back: the same values are new again.
        throttle.throttle.update(policies: policies)
        #expect(
            throttle.admit(device: "a", source: nil, fields: Self.fields(1, packet: 2), now: clock.now),
            "the reload without a policy for 'a' forgot its last reading")
        #expect(!throttle.admit(device: "a", source: nil, fields: Self.fields(1, packet: 3), now: clock.now))
    }
}
