import Foundation
import MQTT
import TestSupport
import Testing

@testable import Outbox
@testable import Publisher

/// Offered readings the outbox refuses for a reason that can pass are held in memory (bounded)
/// and committed, in order, once it accepts writes again: against a real SQLite file locked by a
/// second connection, and a real mosquitto broker.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PublisherHoldTests {
    @Test func readingsOfferedWhileAnotherProcessLocksTheOutboxArriveInOrderAfterwards() async throws {
        let broker = try await MosquittoFixture()
        let directory = try TemporaryDirectory(prefix: "publisher")
        let path = directory.file("o.sqlite").path
        let store = try await OutboxStore(path: path, options: OutboxOptions(busyTimeout: .milliseconds(50)))
        let (subscriberClient, received) = try await PublisherTestSupport.subscriber(broker, filter: "readings/#")
        let client = try PublisherTestSupport.client(broker, clientID: "pub-hold-locked")
        try await client.connect()
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(retryDelay: .milliseconds(100)))
        await publisher.start()
        publisher.offer([TestReading.entry(device: "dev", seq: 0)])
        #expect(await PublisherTestSupport.wait(timeout: .seconds(10)) { received.distinct == 1 })

        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        for seq in 1...40 { publisher.offer([TestReading.entry(device: "dev", seq: seq)]) }
        #expect(
            try await PublisherTestSupport.wait(timeout: .seconds(10)) {
                let stats = try await publisher.stats()
                return stats.storeError?.code == .locked && stats.held == 40
            })
        let whileLocked = try await publisher.stats()
        #expect(whileLocked.depth == whileLocked.outbox.depth + 40)
        #expect(received.distinct == 1)

        try other.execute("COMMIT")
        for seq in 41...50 { publisher.offer([TestReading.entry(device: "dev", seq: seq)]) }
        #expect(await PublisherTestSupport.wait(timeout: .seconds(10)) { received.distinct == 51 })
        #expect(received.firstArrivals()["dev"] == Array(0...50))
        let after = try await publisher.stats()
        #expect(after.storeError == nil)
        #expect(after.held == 0)
        #expect(after.dropped == 0)
        await publisher.stop()
        await client.disconnect()
        await subscriberClient.disconnect()
    }

    @Test func heldReadingsAreCommittedByTheRetryWithoutNewReadings() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let path = directory.file("o.sqlite").path
        let store = try await OutboxStore(path: path, options: OutboxOptions(busyTimeout: .milliseconds(20)))
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(retryDelay: .milliseconds(50)))
        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        for seq in 0..<5 { publisher.offer([TestReading.entry(device: "dev", seq: seq)]) }
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await publisher.stats().held == 5 })
        try other.execute("ROLLBACK")
        // Nothing new is offered: the scheduled retry alone must commit them.
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await store.stats().depth == 5 })
        let stats = try await publisher.stats()
        #expect(stats.held == 0)
        #expect(stats.storeError == nil)
        let stored = try await store.next(limit: 10).compactMap {
            TestReading(MQTTMessage(topic: $0.entry.topic, payload: $0.entry.payload))?.seq
        }
        #expect(stored == Array(0..<5))
    }

    @Test func theHoldIsBoundedTheOldestAreDroppedAndCounted() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(retryDelay: .milliseconds(50), heldLimit: 10))
        try await publisher.submit(TestReading.entry(device: "dev", seq: 0))
        // The connection refuses writes (root ignores file modes): `readOnly`, a refusal that can pass.
        try await store.withConnection { try $0.execute("PRAGMA query_only = ON") }
        for seq in 1...25 { publisher.offer([TestReading.entry(device: "dev", seq: seq)]) }
        #expect(
            try await PublisherTestSupport.wait(timeout: .seconds(10)) {
                let stats = try await publisher.stats()
                return stats.storeError?.code == .readOnly && stats.held == 10 && stats.heldDropped == 15
            })
        #expect(try await publisher.stats().dropped == 15)

        try await store.withConnection { try $0.execute("PRAGMA query_only = OFF") }
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await store.stats().depth == 11 })
        let stored = try await store.next(limit: 20).compactMap {
            TestReading(MQTTMessage(topic: $0.entry.topic, payload: $0.entry.payload))?.seq
        }
        #expect(stored == [0] + Array(16...25))
        let stats = try await publisher.stats()
        #expect(stats.held == 0)
        #expect(stats.dropped == 15)
    }

    /// Issue 19, D9: `dropped` went from 19,848 to 0 across a restart because hold drops were only
    /// counted in memory. They are now added to the outbox's persisted counters (reason `held`).
    @Test func holdDropsSurviveARestart() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
            let publisher = Publisher(
                store: store, client: client, options: PublisherOptions(retryDelay: .milliseconds(50), heldLimit: 10))
            try await store.withConnection { try $0.execute("PRAGMA query_only = ON") }
            for seq in 1...25 { publisher.offer([TestReading.entry(device: "dev", seq: seq)]) }
            #expect(
                try await PublisherTestSupport.wait(timeout: .seconds(10)) {
                    try await publisher.stats().heldDropped == 15
                })
            #expect(try await publisher.stats().dropped == 15)  // not yet persisted, counted all the same
            try await store.withConnection { try $0.execute("PRAGMA query_only = OFF") }
            #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await store.stats().depth == 10 })
            await publisher.stop()
            await store.close()
        }
        let reopened = try await OutboxStore(path: path)
        let stats = try await reopened.stats()
        #expect(stats.dropped[.held] == 15)
        #expect(stats.droppedTotal == 15)
    }

    @Test func anOversizedReadingFailsAloneAndIsNotHeld() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path, options: OutboxOptions(maxBytes: 4096))
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let publisher = Publisher(store: store, client: client)
        var huge = TestReading.entry(device: "big", seq: 0)
        huge.payload = [UInt8](repeating: 0x20, count: 10_000)
        // Whether the two share a commit or not, only the oversized one fails, and it is not held.
        publisher.offer([huge])
        publisher.offer([TestReading.entry(device: "dev", seq: 1)])
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await store.stats().depth == 1 })
        let stats = try await publisher.stats()
        #expect(stats.held == 0)
        #expect(try await store.next(limit: 5).map(\.entry.stream) == ["dev"])
    }

    @Test func onlyRefusalsThatCanPassAreHeld() {
        for code in [OutboxError.Code.locked, .diskFull, .readOnly, .database] {
            #expect(Publisher.canPass(OutboxError(code, "")), "\(code)")
        }
        for code in [OutboxError.Code.corrupt, .schemaTooNew, .entryTooLarge, .cannotOpen, .closed] {
            #expect(!Publisher.canPass(OutboxError(code, "")), "\(code)")
        }
    }
}
