import Foundation
import TestSupport
import Testing
import Timekeeping

@testable import Outbox

@Suite struct OutboxCapsTests {
    @Test func countCapDropsTheOldestAndPersistsTheCounter() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let options = OutboxOptions(maxMessages: 100)
        do {
            let store = try await OutboxStore(path: path, options: options)
            try await store.append((0..<80).map { reading("dev", $0) })
            for index in 80..<130 { try await store.append(reading("dev", index)) }
            let stats = try await store.stats()
            #expect(stats.depth == 100)
            #expect(stats.dropped[.count] == 30)
            #expect(stats.droppedTotal == 30)
            let first = try await store.next(limit: 1)
            #expect(first.first?.entry.payload == reading("dev", 30).payload)
        }
        let reopened = try await OutboxStore(path: path, options: options)
        let stats = try await reopened.stats()
        #expect(stats.dropped[.count] == 30)
        #expect(stats.depth == 100)
        try await reopened.append((0..<5).map { reading("dev", 1000 + $0) })
        #expect(try await reopened.stats().dropped[.count] == 35)
    }

    @Test func byteCapDropsTheOldest() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let size = reading("dev", 10).size  // every payload below is 2 digits
        let store = try await OutboxStore(
            path: directory.file("o.sqlite").path, options: OutboxOptions(maxBytes: size * 20))
        try await store.append((10..<50).map { reading("dev", $0) })
        let stats = try await store.stats()
        #expect(stats.depth == 20)
        #expect(stats.bytes == size * 20)
        #expect(stats.dropped[.bytes] == 20)
        #expect(try await store.next(limit: 1).first?.entry.payload == reading("dev", 30).payload)
    }

    @Test func ageCapDropsExpiredReadings() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(
            path: directory.file("o.sqlite").path, options: OutboxOptions(maxAge: .seconds(3600)))
        let now = Date()
        try await store.append((0..<5).map { reading("dev", $0, at: now.addingTimeInterval(-7200)) })
        try await store.append((5..<8).map { reading("dev", $0, at: now) })
        let stats = try await store.stats()
        #expect(stats.depth == 3)
        #expect(stats.dropped[.age] == 5)
        #expect(stats.dropped[.count] == 0)
    }

    /// The age cap reads the store's clock: readings expire when it passes `maxAge`, not before.
    @Test func ageCapExpiresReadingsWhenTheClockPassesIt() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let clock = ManualClock()
        let store = try await OutboxStore(
            path: directory.file("o.sqlite").path, options: OutboxOptions(maxAge: .seconds(3600)), clock: clock)
        try await store.append((0..<5).map { reading("dev", $0, at: clock.date) })
        clock.advance(by: .seconds(3599))
        try await store.purgeExpired()
        #expect(try await store.stats().depth == 5)
        clock.advance(by: .seconds(2))
        try await store.purgeExpired()
        let stats = try await store.stats()
        #expect(stats.depth == 0)
        #expect(stats.dropped[.age] == 5)
    }

    @Test func anEntryLargerThanTheByteCapIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path, options: OutboxOptions(maxBytes: 64))
        try await store.append(reading("dev", 1))
        let big = OutboxEntry(topic: "t", payload: [UInt8](repeating: 7, count: 100), sampleTime: Date(), stream: "dev")
        let error = await expectThrows(OutboxError.self) { try await store.append([reading("dev", 2), big]) }
        #expect(error?.code == .entryTooLarge)
        #expect(try await store.stats().depth == 1)  // nothing of the refused batch was stored
    }
}

@Suite struct OutboxDropTests {
    @Test func droppedEntriesAreCountedUnderTheirReason() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            let ids = try await store.append((0..<4).map { reading("dev", $0) })
            #expect(try await store.drop(ids: [ids[1], ids[2]], reason: .rejected) == 2)
            let stats = try await store.stats()
            #expect(stats.depth == 2)
            #expect(stats.dropped[.rejected] == 2)
            #expect(stats.delivered == 0)
        }
        #expect(try await OutboxStore(path: path).stats().dropped[.rejected] == 2)
    }
}
