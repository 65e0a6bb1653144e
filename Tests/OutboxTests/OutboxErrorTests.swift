import Foundation
import TestSupport
import Testing

@testable import Outbox

@Suite struct OutboxErrorTests {
    @Test func aFullDatabaseIsDiskFullAndKeepsWhatWasStored() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        try await store.append(reading("dev", 0))
        // Cap the file at its current size: the next pages cannot be allocated, as on a full disk.
        try await store.withConnection { connection in
            let pages = try connection.integer("PRAGMA page_count") ?? 0
            _ = try connection.integer("PRAGMA max_page_count = \(pages)")
        }
        let big = (0..<200).map {
            OutboxEntry(topic: "t", payload: [UInt8](repeating: 1, count: 1000), sampleTime: Date(), stream: "dev\($0)")
        }
        let error = await expectThrows(OutboxError.self) { try await store.append(big) }
        #expect(error?.code == .diskFull)
        #expect(error?.underlying?.code == .full)
        let stats = try await store.stats()
        #expect(stats.depth == 1)
        #expect(try await store.next(limit: 10).count == 1)
    }

    @Test func aDatabaseLockedByAnotherWriterIsLocked() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let store = try await OutboxStore(path: path, options: OutboxOptions(busyTimeout: .milliseconds(100)))
        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        let error = await expectThrows(OutboxError.self) { try await store.append(reading("dev", 0)) }
        #expect(error?.code == .locked)
        try other.execute("ROLLBACK")
        try await store.append(reading("dev", 0))
        #expect(try await store.stats().depth == 1)
    }

    @Test func aReadOnlyDatabaseIsReadOnly() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        // Root ignores file modes, so make the connection itself refuse writes.
        try await store.withConnection { try $0.execute("PRAGMA query_only = ON") }
        let error = await expectThrows(OutboxError.self) { try await store.append(reading("dev", 0)) }
        #expect(error?.code == .readOnly)
    }
}
