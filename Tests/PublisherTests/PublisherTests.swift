import Foundation
import MQTT
import TestSupport
import Testing

@testable import Outbox
@testable import Publisher

@Suite(.serialized, .timeLimit(.minutes(1))) struct PublisherTests {
    @Test func publishesInOrderWithTheSampleTimeAndDeletesWhenAcknowledged() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(broker, filter: "readings/#")
        let client = try PublisherTestSupport.client(broker, clientID: "pub-order")
        try await client.connect()
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(window: 16, sampleTimeProperty: "sample_time"))
        await publisher.start()
        #expect(await !publisher.allTasksEnded)

        let devices = ["hr_strap", "thermometer", "bthome"]
        let base = Date().addingTimeInterval(-60)
        for seq in 0..<300 {
            let device = devices[seq % 3]
            try await publisher.submit(
                TestReading.entry(device: device, seq: seq / 3, time: base.addingTimeInterval(Double(seq) / 1000)))
        }
        #expect(await PublisherTestSupport.wait(timeout: .seconds(20)) { received.distinct == 300 })
        let arrivals = received.firstArrivals()
        for device in devices { #expect(arrivals[device] == Array(0..<100)) }
        // The sample time travels unchanged: in the payload (as the test wrote it) and in the user property.
        let unstamped = received.unstamped(property: "sample_time")
        #expect(unstamped.isEmpty, "\(unstamped.count) messages without their sample time, e.g. \(unstamped.prefix(2))")
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(5)) { try await store.stats().depth == 0 })
        let stats = try await publisher.stats()
        #expect(stats.published == 300)
        #expect(stats.outbox.delivered == 300)
        #expect(stats.dropped == 0)
        await publisher.stop()
        // The stop returns once the task following the client's states has ended (issue 20).
        #expect(await publisher.allTasksEnded)
        await client.disconnect()
        await subscriberClient.disconnect()
    }

    /// No acknowledgement comes (the broker is frozen, the connection stays up): the window is
    /// sent again at each stall deadline (a timer armed for it, no periodic tick), and every row
    /// is delivered and deleted once the broker answers.
    @Test func aStalledWindowIsSentAgainAtEachStallDeadline() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let client = try PublisherTestSupport.client(broker, clientID: "pub-stall")
        try await client.connect()
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(window: 4, stallTimeout: .milliseconds(500)))
        await publisher.start()
        broker.pause()
        let started = ContinuousClock.now
        for seq in 0..<4 { try await publisher.submit(TestReading.entry(device: "dev", seq: seq)) }
        // Two stalls in a row, each `stallTimeout` after the window was last sent.
        let stalled = try await PublisherTestSupport.wait(timeout: .seconds(30)) {
            try await publisher.stats().stalls >= 2
        }
        let waited = ContinuousClock.now - started
        let whileStalled = try await publisher.stats()
        broker.resume()
        #expect(stalled, "\(whileStalled)")
        #expect(waited >= .seconds(1), "two stalls after \(waited)")
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(30)) { try await store.stats().depth == 0 })
        let stats = try await publisher.stats()
        #expect(stats.published >= 4 && stats.outbox.delivered == 4, "\(stats)")
        await publisher.stop()
        await client.disconnect()
    }

    @Test func submitDoesNotWaitForADownBrokerAndTheBacklogDrainsInOrder() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(
            broker, filter: "readings/#", clientID: "sub-backlog", cleanSession: false)
        let client = try PublisherTestSupport.client(broker, clientID: "pub-backlog")
        try await client.connect()
        let publisher = Publisher(store: store, client: client, options: PublisherOptions(window: 32))
        await publisher.start()

        await broker.stop()
        #expect(await PublisherTestSupport.wait(timeout: .seconds(5)) { !client.connectionState.isConnected })
        let clock = ContinuousClock()
        let started = clock.now
        for seq in 0..<1000 { try await publisher.submit(TestReading.entry(device: "dev", seq: seq)) }
        let elapsed = clock.now - started
        #expect(elapsed < .seconds(10))
        var stats = try await publisher.stats()
        #expect(stats.depth == 1000)
        #expect(!stats.connected)
        #expect(stats.oldestUnsentAge(now: Date()).map { $0 >= .zero } == true)

        try await broker.start()
        // Live readings keep flowing behind the backlog.
        for seq in 1000..<1100 { try await publisher.submit(TestReading.entry(device: "dev", seq: seq)) }
        let delivered = await PublisherTestSupport.wait(timeout: .seconds(30)) { received.distinct == 1100 }
        let snapshot = try await publisher.stats()
        #expect(delivered, "received \(received.distinct); publisher \(snapshot)")
        #expect(received.firstArrivals()["dev"] == Array(0..<1100))
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(5)) { try await store.stats().depth == 0 })
        stats = try await publisher.stats()
        #expect(stats.published >= 1100)
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }

    @Test func capsDropTheOldestWhileTheBrokerIsDownAndTheCountIsVisible() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let path = directory.file("o.sqlite").path
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(
            broker, filter: "readings/#", clientID: "sub-caps", cleanSession: false)
        await broker.stop()
        do {
            let store = try await OutboxStore(path: path, options: OutboxOptions(maxMessages: 100))
            let client = try PublisherTestSupport.client(broker, clientID: "pub-caps")
            try await client.start()
            let publisher = Publisher(store: store, client: client)
            await publisher.start()
            for seq in 0..<150 { try await publisher.submit(TestReading.entry(device: "dev", seq: seq)) }
            let stats = try await publisher.stats()
            #expect(stats.depth == 100)
            #expect(stats.dropped == 50)
            #expect(stats.outbox.dropped[.count] == 50)
            await publisher.stop(drainTimeout: .zero)
            await client.disconnect()
        }
        // The count survives a restart, and the 100 newest readings are delivered, in order.
        let store = try await OutboxStore(path: path, options: OutboxOptions(maxMessages: 100))
        #expect(try await store.stats().dropped[.count] == 50)
        try await broker.start()
        let client = try PublisherTestSupport.client(broker, clientID: "pub-caps")
        try await client.connect()
        let publisher = Publisher(store: store, client: client)
        await publisher.start()
        #expect(await PublisherTestSupport.wait(timeout: .seconds(15)) { received.distinct == 100 })
        #expect(received.firstArrivals()["dev"] == Array(50..<150))
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }

    @Test func aReadingTheBrokerCannotTakeIsDroppedAndCountedAndTheRestFlows() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(broker, filter: "readings/#")
        let client = try PublisherTestSupport.client(broker, clientID: "pub-refused")
        try await client.connect()
        let publisher = Publisher(store: store, client: client)
        await publisher.start()
        try await publisher.submit(TestReading.entry(device: "dev", seq: 0))
        try await publisher.submit(
            OutboxEntry(topic: "readings/+/bad", payload: [1], sampleTime: Date(), stream: "dev"))
        try await publisher.submit(TestReading.entry(device: "dev", seq: 1))
        #expect(await PublisherTestSupport.wait(timeout: .seconds(10)) { received.distinct == 2 })
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(5)) { try await store.stats().depth == 0 })
        let stats = try await publisher.stats()
        #expect(stats.outbox.dropped[.rejected] == 1)
        #expect(stats.outbox.delivered == 2)
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }
}

@Suite struct PublisherSubmitTests {
    @Test func concurrentSubmitsShareTransactionsAndABadOneFailsAlone() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(
            path: directory.file("o.sqlite").path, options: OutboxOptions(maxBytes: 50_000))
        // Never started: submits must not need a broker.
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let publisher = Publisher(store: store, client: client)
        let failures = await withTaskGroup(of: OutboxError?.self) { group in
            for device in 0..<20 {
                group.addTask {
                    do {
                        for seq in 0..<10 {
                            if device == 7 && seq == 5 {
                                try await publisher.submit(
                                    OutboxEntry(
                                        topic: "t", payload: [UInt8](repeating: 0, count: 100_000), sampleTime: Date(),
                                        stream: "dev7"))
                            } else {
                                try await publisher.submit(TestReading.entry(device: "dev\(device)", seq: seq))
                            }
                        }
                        return nil
                    } catch {
                        return error as? OutboxError
                    }
                }
            }
            var failures: [OutboxError] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        #expect(failures.map(\.code) == [.entryTooLarge])
        // dev7 stopped at its failing submit; everything else was stored, each device in order.
        let records = try await store.next(limit: 1000)
        #expect(records.count == 19 * 10 + 5)
        var perDevice: [String: [Int]] = [:]
        for record in records {
            let object = try JSONSerialization.jsonObject(with: Data(record.entry.payload)) as? [String: Any]
            perDevice[record.entry.stream, default: []].append(object?["seq"] as? Int ?? -1)
        }
        #expect(perDevice["dev7"] == Array(0..<5))
        #expect(perDevice["dev3"] == Array(0..<10))
    }
}

@Suite struct PublisherDegradedTests {
    @Test func aFullOutboxIsReportedInTheStatsUntilItAcceptsAgain() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let publisher = Publisher(store: store, client: client)
        try await publisher.submit(TestReading.entry(device: "dev", seq: 0))
        let pages = try await store.withConnection { try $0.integer("PRAGMA page_count") ?? 0 }
        try await store.withConnection { _ = try $0.integer("PRAGMA max_page_count = \(pages)") }
        let big = (0..<100).map {
            OutboxEntry(topic: "t", payload: [UInt8](repeating: 1, count: 2000), sampleTime: Date(), stream: "dev\($0)")
        }
        let error = await expectThrows(OutboxError.self) { try await publisher.submit(big) }
        #expect(error?.code == .diskFull)
        #expect(try await publisher.stats().storeError?.code == .diskFull)
        try await store.withConnection { _ = try $0.integer("PRAGMA max_page_count = 1000000") }
        try await publisher.submit(TestReading.entry(device: "dev", seq: 1))
        let stats = try await publisher.stats()
        #expect(stats.storeError == nil)
        #expect(stats.depth == 2)
    }
}

@Suite(.timeLimit(.minutes(1))) struct PublisherProtocolTests {
    @Test func overMQTT311TheSampleTimePropertyIsLeftOutAndNothingIsDropped() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(broker, filter: "readings/#")
        let client = MQTTClient(
            configuration: try MQTTConfiguration(url: broker.url, clientID: "pub-311", protocolVersion: .v311))
        try await client.connect()
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(sampleTimeProperty: "sample_time"))
        await publisher.start()
        for seq in 0..<10 { try await publisher.submit(TestReading.entry(device: "dev", seq: seq)) }
        #expect(await PublisherTestSupport.wait(timeout: .seconds(10)) { received.distinct == 10 })
        #expect(received.all.allSatisfy { $0.properties.userProperties.isEmpty })
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(5)) { try await store.stats().depth == 0 })
        #expect(try await publisher.stats().dropped == 0)
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }
}
