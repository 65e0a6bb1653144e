import Bluetooth
import Decoders
import Foundation
import MQTT
import Outbox
import Publisher
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Gateway

/// `ReadingPipeline`: readings to the outbox (through a real store and a publisher whose client is
/// not started, so rows stay where they were committed) and the events the gateway actor hears.
@Suite struct ReadingPipelineTests {
    let directory: TemporaryDirectory
    static let heartRate = ReadingPipeline.Subscription(
        characteristic: BluetoothUUID(UInt16(0x2A37)), decoder: nil, layout: nil,
        source: FieldNamer.Source(rank: 0, characteristic: "heart_rate_measurement"))

    init() throws {
        directory = try TemporaryDirectory(prefix: "pipeline")
    }

    /// A pipeline for the configured devices `hr_strap` and `thermo`.
    private func pipeline(
        homeAssistant: Bool = false, rawTopics: Bool = false, stateWindow: Duration = .zero,
        clock: any BridgeClock = SystemClock()
    ) async throws -> (ReadingPipeline, Publisher) {
        let store = try await OutboxStore(path: directory.file("outbox.sqlite").path)
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:1", clientID: "idle"))
        let publisher = Publisher(store: store, client: client)
        let topics = TopicContract()
        let router = ReadingRouter(
            topics: topics, qos: .atLeastOnce, rawTopics: rawTopics,
            discoveryBuilder: homeAssistant ? DiscoveryBuilder(topics: topics, gatewayID: "blebridge") : nil,
            devices: [DiscoveryDevice(id: "hr_strap", name: "Strap"), DiscoveryDevice(id: "thermo", name: "Thermo")])
        return (
            ReadingPipeline(
                router: router, namer: FieldNamer(), publisher: publisher, stateWindow: stateWindow, clock: clock),
            publisher
        )
    }

    /// A heart-rate measurement (flags 0, 8-bit value).
    private func beat(_ bpm: Int) -> [UInt8] { [0x00, UInt8(bpm)] }

    /// Every row in the outbox, once the publisher committed what was offered before this call.
    private func rows(_ publisher: Publisher) async throws -> [OutboxRecord] {
        // `stats()` runs on the outbox thread after the drains the offers queued there.
        _ = try await publisher.stats()
        return try await publisher.store.next(limit: 10_000)
    }

    private func heartRates(_ records: [OutboxRecord]) -> [Int] {
        records.compactMap { record in
            let object = try? JSONSerialization.jsonObject(with: Data(record.entry.payload)) as? [String: Any]
            return object?["heart_rate"] as? Int
        }
    }

    /// Everything the events stream yielded (ends it first).
    private func events(of pipeline: ReadingPipeline) async -> [ReadingPipeline.Event] {
        pipeline.stopAccepting()
        return await withDeadline(.seconds(5)) {
            var all: [ReadingPipeline.Event] = []
            for await event in pipeline.events { all.append(event) }
            return all
        } ?? []
    }

    @Test func readingsOfConfiguredDevicesReachTheOutboxInOrder() async throws {
        let (pipeline, publisher) = try await pipeline()
        let start = Date()
        // Two devices from two threads at once: each device's readings keep their order.
        let threads = ["hr_strap", "thermo"].map { device in
            Thread {
                for index in 0..<200 {
                    pipeline.received(
                        [0x00, UInt8(index)], device: device, subscription: Self.heartRate,
                        sampleTime: start + Double(index) / 1000)
                }
            }
        }
        for thread in threads { thread.start() }
        #expect(try await waitUntil { try await publisher.store.stats().depth == 400 })
        let records = try await rows(publisher)
        #expect(records.map(\.id) == records.map(\.id).sorted())
        for device in ["hr_strap", "thermo"] {
            let own = records.filter { $0.entry.stream == device }
            #expect(own.allSatisfy { $0.entry.topic == "blebridge/\(device)" })
            #expect(heartRates(own) == Array(0..<200))
            #expect(own.map(\.entry.sampleTime) == own.map(\.entry.sampleTime).sorted())
        }
    }

    /// One device fed from two threads (two characteristics): rows enter the outbox in the order
    /// their readings were merged, so each field only moves forward from row to row.
    @Test func oneDeviceFromTwoThreadsEntersTheOutboxInMergeOrder() async throws {
        let (pipeline, publisher) = try await pipeline()
        let threads = ["a", "b"].map { field in
            Thread {
                for index in 0..<300 {
                    pipeline.deliver(
                        device: "hr_strap", fields: [DecodedField(name: field, value: .int(Int64(index)))], raw: nil,
                        rssi: nil, sampleTime: Date(), fromConnection: true)
                }
            }
        }
        for thread in threads { thread.start() }
        #expect(try await waitUntil { try await publisher.store.stats().depth == 600 })
        let states = try await rows(publisher).map { record in
            (try? JSONSerialization.jsonObject(with: Data(record.entry.payload)) as? [String: Any]) ?? [:]
        }
        for field in ["a", "b"] {
            let values = states.map { $0[field] as? Int ?? -1 }
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "\(field) went backwards")
            #expect(values.last == 299)
        }
    }

    @Test func unknownDevicesAndReadingsAfterStopAcceptingAreIgnored() async throws {
        let (pipeline, publisher) = try await pipeline()
        pipeline.received(beat(60), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.received(beat(61), device: "stranger", subscription: Self.heartRate, sampleTime: Date())
        pipeline.deliver(
            device: "stranger", fields: [DecodedField(name: "temperature", value: .double(20))], raw: nil, rssi: -70,
            sampleTime: Date(), fromConnection: false)
        pipeline.stopAccepting()
        pipeline.received(beat(62), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.deliver(
            device: "hr_strap", fields: [DecodedField(name: "battery", value: .int(80))], raw: nil, rssi: -60,
            sampleTime: Date(), fromConnection: false)
        let records = try await rows(publisher)
        #expect(records.map(\.entry.stream) == ["hr_strap"])
        #expect(heartRates(records) == [60])
        let events = await events(of: pipeline)
        #expect(events.map(\.device) == ["hr_strap"])
    }

    /// Advertisements are not reported (the intake reported the device seen, with its RSSI, before
    /// it delivered them), unless they bring new fields (the next test).
    @Test func connectionReadingsAreReportedAtMostEveryReportIntervalAndAdvertisementsNot() async throws {
        let clock = ManualClock()
        let (pipeline, publisher) = try await pipeline(clock: clock)
        for bpm in 60..<80 {
            pipeline.received(beat(bpm), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        }
        pipeline.received(beat(70), device: "thermo", subscription: Self.heartRate, sampleTime: Date())
        for rssi in [-61, -62] {
            pipeline.deliver(
                device: "hr_strap", fields: [], raw: nil, rssi: rssi, sampleTime: Date(), fromConnection: false)
        }
        // Just inside the interval nothing more is reported; once it has passed, the next reading is.
        clock.advance(by: ReadingPipeline.reportInterval - .milliseconds(1))
        pipeline.received(beat(89), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        clock.advance(by: .milliseconds(1))
        pipeline.received(beat(90), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        let events = await events(of: pipeline)
        #expect(events.map(\.device) == ["hr_strap", "thermo", "hr_strap"])
        #expect(events.map(\.rssi) == [nil, nil, nil])
        #expect(events.map(\.fromConnection) == [true, true, true])
        #expect(events.allSatisfy { $0.discovery.isEmpty })  // Home Assistant is off
        #expect(try await rows(publisher).count == 25)  // every reading was stored all the same
    }

    @Test func aReadingWithNewFieldsIsReportedAtOnceWithItsDiscovery() async throws {
        let (pipeline, _) = try await pipeline(homeAssistant: true)
        pipeline.received(beat(60), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.received(beat(61), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.deliver(
            device: "hr_strap", fields: [DecodedField(name: "battery", value: .int(80), unit: "%", kind: .battery)],
            named: FieldNamer.Source(rank: 1, characteristic: "battery_level"), raw: nil, rssi: nil, sampleTime: Date(),
            fromConnection: true)
        pipeline.received(beat(62), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        // An advertisement too, the first time it brings a field.
        for rssi in [-70, -71] {
            pipeline.deliver(
                device: "thermo", fields: [DecodedField(name: "temperature", value: .double(21.5), unit: "°C")],
                raw: nil, rssi: rssi, sampleTime: Date(), fromConnection: false)
        }
        let events = await events(of: pipeline)
        #expect(events.count == 3)
        #expect(
            events.first?.discovery.map(\.topic) == ["homeassistant/sensor/blebridge_hr_strap/heart_rate/config"])
        #expect(events[1].discovery.map(\.topic) == ["homeassistant/sensor/blebridge_hr_strap/battery/config"])
        #expect(events.last?.fromConnection == false && events.last?.rssi == -70)
        let announced = events.last?.discovery.map(\.topic) ?? []
        #expect(!announced.isEmpty && announced.allSatisfy { $0.hasPrefix("homeassistant/sensor/blebridge_thermo/") })
    }

    /// Four notifications of four characteristics in the same millisecond (the demo thermometer's
    /// burst) become one state publish carrying all of them, once the window has passed on the
    /// pipeline's clock; the raw topic keeps every reading at once. A heart rate read twice within
    /// the window publishes the first at once: no value read is lost.
    @Test func aBurstOfReadingsBecomesOneStatePublishAndRawTopicsKeepEveryReading() async throws {
        let clock = ManualClock()
        let (pipeline, publisher) = try await pipeline(
            rawTopics: true, stateWindow: .milliseconds(50), clock: clock)
        let start = Date()
        for (index, name) in ["temperature", "humidity", "pressure", "intermediate"].enumerated() {
            pipeline.deliver(
                device: "thermo", fields: [DecodedField(name: name, value: .int(Int64(index)))],
                raw: (name, [UInt8(index)]), rssi: nil, sampleTime: start + Double(index) / 1000,
                fromConnection: true)
        }
        // One flush waits on the clock; the raw entries are already in the outbox, the state not.
        await clock.sleeping(atLeast: 1)
        var records = try await rows(publisher)
        #expect(records.count == 4 && records.allSatisfy { $0.entry.topic.hasPrefix("blebridge/thermo/raw/") })
        clock.advance(by: .milliseconds(49))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 5 })
        records = try await rows(publisher)
        let states = records.filter { $0.entry.topic == "blebridge/thermo" }.map { record in
            (try? JSONSerialization.jsonObject(with: Data(record.entry.payload)) as? [String: Any]) ?? [:]
        }
        #expect(states.count == 1)
        #expect(states.first.map { Set($0.keys) } == ["temperature", "humidity", "pressure", "intermediate", "ts"])

        // The same field twice within a window: the first value is published at once.
        pipeline.received(beat(70), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.received(beat(71), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        #expect(try await waitUntil { try await publisher.store.stats().depth == 8 })
        records = try await rows(publisher)
        #expect(heartRates(records.filter { $0.entry.topic == "blebridge/hr_strap" }) == [70])
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .milliseconds(50))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 9 })
        records = try await rows(publisher)
        #expect(heartRates(records.filter { $0.entry.topic == "blebridge/hr_strap" }) == [70, 71])
    }

    /// A button press is an event: the state published with its reading carries it and the next
    /// state does not (Home Assistant's event entity would fire again on every later publish),
    /// also when the next reading comes within the window: the press is then published at once.
    @Test func aButtonPressIsInTheStateOfItsReadingOnly() async throws {
        let clock = ManualClock()
        let (pipeline, publisher) = try await pipeline(stateWindow: .milliseconds(50), clock: clock)
        let start = Date()
        let press = DecodedField(name: "button", value: .string("press"), kind: .event("button", types: ["press"]))
        pipeline.deliver(
            device: "thermo", fields: [press], raw: nil, rssi: nil, sampleTime: start, fromConnection: true)
        pipeline.deliver(
            device: "thermo", fields: [DecodedField(name: "temperature", value: .int(21))], raw: nil, rssi: nil,
            sampleTime: start + 0.001, fromConnection: true)
        #expect(try await waitUntil { try await publisher.store.stats().depth == 1 })
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .milliseconds(50))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 2 })
        let states = try await rows(publisher).map { record in
            Set(((try? JSONSerialization.jsonObject(with: Data(record.entry.payload)) as? [String: Any]) ?? [:]).keys)
        }
        #expect(states == [["button", "ts"], ["temperature", "ts"]])
    }

    /// The burst windows of several devices are closed by one task sleeping on the clock, until the
    /// oldest closes, and the states whose windows closed together are handed over together (a task
    /// and a timer per window cost about a tenth of the CPU at 1,000 advertisements/s).
    @Test func oneSleeperClosesTheWindowsOfEveryDevice() async throws {
        let clock = ManualClock()
        let (pipeline, publisher) = try await pipeline(stateWindow: .milliseconds(50), clock: clock)
        let start = Date()
        pipeline.received(beat(60), device: "hr_strap", subscription: Self.heartRate, sampleTime: start)
        clock.advance(by: .milliseconds(10))
        pipeline.deliver(
            device: "thermo", fields: [DecodedField(name: "temperature", value: .int(21))], raw: nil, rssi: nil,
            sampleTime: start + 0.01, fromConnection: true)
        await clock.sleeping(atLeast: 1)
        #expect(clock.sleeperCount == 1, "one sleeper for two open windows")
        clock.advance(by: .milliseconds(40))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 1 })
        #expect(heartRates(try await rows(publisher)) == [60])
        // thermo's window closes 10 ms later: the same task sleeps again, for it.
        await clock.sleeping(atLeast: 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(10))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 2 })
        // Nothing open: the flusher waits for the next window's kick, with no timer.
        #expect(clock.sleeperCount == 0)
        pipeline.received(beat(61), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .milliseconds(50))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 3 })
        #expect(heartRates(try await rows(publisher)) == [60, 61])

        // A window closing less than `flushGranularity` (2 ms) after a flush waits for the flusher's
        // next look: the flusher wakes at most every 2 ms, a state at most 2 ms late.
        pipeline.received(beat(62), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        clock.advance(by: .microseconds(500))
        pipeline.deliver(
            device: "thermo", fields: [DecodedField(name: "temperature", value: .int(22))], raw: nil, rssi: nil,
            sampleTime: Date(), fromConnection: true)
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .microseconds(49_500))  // hr_strap's window closes; thermo's in 0.5 ms
        #expect(try await waitUntil { try await publisher.store.stats().depth == 4 })
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .milliseconds(1))  // thermo's is due now, but the flusher looks again at 2 ms
        #expect(try await publisher.store.stats().depth == 4)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await waitUntil { try await publisher.store.stats().depth == 5 })
    }

    /// A state still waiting for its window is published when the gateway stops.
    @Test func stoppingPublishesTheStatesWaitingForTheirWindow() async throws {
        let (pipeline, publisher) = try await pipeline(stateWindow: .seconds(1))
        pipeline.received(beat(60), device: "hr_strap", subscription: Self.heartRate, sampleTime: Date())
        pipeline.received(beat(61), device: "thermo", subscription: Self.heartRate, sampleTime: Date())
        pipeline.stopAccepting()
        let records = try await rows(publisher)
        #expect(heartRates(records) == [60, 61])
    }
}

/// ``StateCoalescer``: the pure decisions behind one message per burst.
@Suite struct StateCoalescerTests {
    func entry(_ text: String) -> OutboxEntry {
        OutboxEntry(
            topic: "t", payload: Array(text.utf8), qos: .atLeastOnce, retain: false,
            sampleTime: Date(timeIntervalSince1970: 0), stream: "d")
    }

    @Test func theFirstReadingSchedulesAFlushAndLaterOnesMergeIntoIt() {
        var coalescer = StateCoalescer(window: .milliseconds(50))
        #expect(coalescer.offer(entry("1"), device: "a", fields: ["t"]) == .scheduleFlush)
        #expect(coalescer.offer(entry("2"), device: "a", fields: ["h"]) == .merged)
        #expect(coalescer.offer(entry("x"), device: "b", fields: ["t"]) == .scheduleFlush)
        #expect(coalescer.offer(entry("3"), device: "a", fields: ["p"]) == .merged)
        #expect(coalescer.flush(device: "a") == entry("3"))
        #expect(coalescer.flush(device: "a") == nil)
        // The next reading starts a new burst.
        #expect(coalescer.offer(entry("4"), device: "a", fields: ["t"]) == .scheduleFlush)
        #expect(coalescer.flushAll().map(\.payload) == [Array("4".utf8), Array("x".utf8)])
        #expect(coalescer.flush(device: "b") == nil)
    }

    @Test func aFieldChangedTwiceInOneBurstPublishesTheFirstValueAtOnce() {
        var coalescer = StateCoalescer(window: .milliseconds(50))
        #expect(coalescer.offer(entry("1"), device: "a", fields: ["heart_rate"]) == .scheduleFlush)
        #expect(coalescer.offer(entry("2"), device: "a", fields: ["battery"]) == .merged)
        // heart_rate again: the state holding the first heart rate (and the battery) goes now.
        #expect(coalescer.offer(entry("3"), device: "a", fields: ["heart_rate"]) == .publishPending(entry("2")))
        // The new burst only holds heart_rate: the battery may change again without a publish.
        #expect(coalescer.offer(entry("4"), device: "a", fields: ["battery"]) == .merged)
        #expect(coalescer.flush(device: "a") == entry("4"))
    }

    @Test func aZeroWindowPublishesEveryReading() {
        var coalescer = StateCoalescer(window: .zero)
        #expect(coalescer.offer(entry("1"), device: "a", fields: ["t"]) == .publish(entry("1")))
        #expect(coalescer.offer(entry("2"), device: "a", fields: ["t"]) == .publish(entry("2")))
        #expect(coalescer.pending.isEmpty)
    }
}
