import EventLoop
import Foundation
import Logging
import MQTT
import TestSupport
import Testing
import Timekeeping

@testable import Outbox
@testable import Publisher

/// The log's last word on the outbox is the truth: the throttle (one line per kind per
/// `storeLogInterval`) may delay a change, never leave it out. Against a real SQLite file locked by
/// a second connection, on a manual clock.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PublisherStoreLogTests {
    /// The publisher's outbox lines, in order.
    static func lines(_ capture: LogCapture) -> [String] {
        capture.captured.map(\.message).filter { $0.hasPrefix("outbox ") }
    }

    @Test func aRefusalSoonAfterARecoveryIsLoggedOnceTheIntervalHasPassed() async throws {
        let directory = try TemporaryDirectory(prefix: "publisher")
        let path = directory.file("o.sqlite").path
        let clock = ManualClock()
        let store = try await OutboxStore(
            path: path, options: OutboxOptions(busyTimeout: .milliseconds(20)),
            loop: try EventLoop(name: "blebridge.outbox", clock: clock))
        let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:9", clientID: "idle"))
        let capture = LogCapture(label: "publisher-storelog-\(UUID().uuidString)")
        let publisher = Publisher(
            store: store, client: client, options: PublisherOptions(retryDelay: .seconds(1)),
            logger: capture.logger)
        let other = try SQLiteConnection(path: path)
        var seq = 0
        /// Offers one reading and waits until the publisher has met the outbox with it.
        func offer(until done: @escaping @Sendable (PublisherStats) -> Bool) async throws {
            publisher.offer([TestReading.entry(device: "dev", seq: seq)])
            seq += 1
            #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { done(try await publisher.stats()) })
        }

        // Refused (locked), then accepted again by the held readings' retry: both said at once.
        try other.execute("BEGIN IMMEDIATE")
        try await offer { $0.storeError?.code == .locked }
        try other.execute("ROLLBACK")
        clock.advance(by: .seconds(1))
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await publisher.stats().held == 0 })
        #expect(Self.lines(capture) == ["outbox refused readings", "outbox accepts readings again"])

        // Refused again 5 s after the first refusal's line: within its interval, held back…
        clock.advance(by: .seconds(4))
        try other.execute("BEGIN IMMEDIATE")
        try await offer { $0.storeError?.code == .locked }
        #expect(Self.lines(capture).last == "outbox accepts readings again")
        // …and said once the interval has passed, by the next result that still differs from the
        // log (the retry's or a new reading's), with the count held back.
        clock.advance(by: .seconds(6))
        try await offer { $0.held >= 2 }
        #expect(
            await PublisherTestSupport.wait(timeout: .seconds(10)) {
                Self.lines(capture).last == "outbox refused readings"
            }, "\(Self.lines(capture))")
        let catchUp = try #require(capture.captured.last { $0.message == "outbox refused readings" })
        #expect(catchUp.metadata.contains { $0.0 == "code" && $0.1 == "locked" })
        #expect(catchUp.metadata.contains { $0.0 == "suppressed" && $0.1 == "1" }, "\(catchUp.metadata)")
        // Still refused, through retries and readings: nothing more is said about it.
        clock.advance(by: .seconds(20))
        try await offer { $0.held >= 3 }
        #expect(Self.lines(capture).filter { $0 == "outbox refused readings" }.count == 2)
        try other.execute("ROLLBACK")
        clock.advance(by: .seconds(1))
        #expect(try await PublisherTestSupport.wait(timeout: .seconds(10)) { try await publisher.stats().held == 0 })
        #expect(Self.lines(capture).last == "outbox accepts readings again", "\(Self.lines(capture))")
    }
}
