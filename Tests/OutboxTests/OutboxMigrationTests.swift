import Foundation
import TestSupport
import Testing

@testable import Outbox

@Suite struct OutboxMigrationTests {
    @Test func freshFileIsAtTheCurrentVersion() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let store = try await OutboxStore(path: path)
        #expect(try await store.withConnection { try $0.userVersion() } == OutboxSchema.currentVersion)
        #expect(OutboxSchema.currentVersion == OutboxSchema.migrations.count)
    }

    @Test func migratesAVersionOneFileKeepingItsRows() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let old = try SQLiteConnection(path: path)
            #expect(try OutboxSchema.migrate(old, upTo: 1) == [1])
            try old.execute(
                """
                INSERT INTO outbox (stream, topic, payload, qos, retain, sample_time, enqueued_at)
                VALUES ('dev', 'a/b', x'010203', 1, 0, 1700000000000000, 1700000000000001),
                       ('dev', 'a/c', x'04', 0, 1, 1700000000000002, 1700000000000003);
                """)
        }
        let store = try await OutboxStore(path: path)
        #expect(try await store.withConnection { try $0.userVersion() } == OutboxSchema.currentVersion)
        let stats = try await store.stats()
        #expect(stats.depth == 2)
        #expect(stats.bytes == 10)  // topic + payload of each row (3 + 3 + 3 + 1), filled in by migration 3
        #expect(stats.delivered == 0)
        let records = try await store.next(limit: 10)
        #expect(records.map(\.entry.topic) == ["a/b", "a/c"])
        #expect(records[0].entry.payload == [1, 2, 3])
        #expect(records[1].entry.retain)
        #expect(records[1].entry.qos == .atMostOnce)
        #expect(OutboxDatabase.microseconds(records[0].entry.sampleTime) == 1_700_000_000_000_000)
        try await store.remove(ids: [records[0].id])
        #expect(try await store.stats().delivered == 1)
    }

    /// Version 5 rebuilds the queue without AUTOINCREMENT: rows keep their ids, and the next id is
    /// above the highest SQLite's sequence had issued, even one whose row was already deleted.
    @Test func migratesAVersionFourFileKeepingItsIdsAndItsSequence() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let old = try SQLiteConnection(path: path)
            #expect(try OutboxSchema.migrate(old, upTo: 4) == [1, 2, 3, 4])
            for index in 0..<4 {
                try old.execute(
                    """
                    INSERT INTO outbox (stream, topic, payload, qos, retain, sample_time, enqueued_at, size)
                    VALUES ('dev', 'a/\(index)', x'01', 1, 0, 1700000000000000, 1700000000000001, 4)
                    """)
            }
            try old.execute("DELETE FROM outbox WHERE id IN (1, 4)")
        }
        let store = try await OutboxStore(path: path)
        #expect(try await store.withConnection { try $0.userVersion() } == OutboxSchema.currentVersion)
        let sql = try await store.withConnection { try $0.texts("SELECT sql FROM sqlite_master WHERE name = 'outbox'") }
        #expect(sql.count == 1 && !sql[0].uppercased().contains("AUTOINCREMENT"))
        let records = try await store.next(limit: 10)
        #expect(records.map(\.id) == [2, 3])
        #expect(records.map(\.entry.topic) == ["a/1", "a/2"])
        #expect(try await store.stats().bytes == 8)
        #expect(try await store.append(reading("dev", 9)) == 5)
    }

    /// Version 5 copies the queue; on a full disk (here: the file pinned at its page count, which
    /// SQLite refuses with `SQLITE_FULL` as it does a full file system) it is left for a later open,
    /// and the file, at version 4, keeps its rows; the store writes such a file as well.
    @Test func theQueueRebuildWaitsForRoomOnAFullDisk() throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let connection = try SQLiteConnection(path: directory.file("o.sqlite").path)
        try OutboxSchema.migrate(connection, upTo: 4)
        try connection.execute(
            """
            INSERT INTO outbox (stream, topic, payload, qos, retain, sample_time, enqueued_at, size)
            VALUES ('dev', 'a/b', zeroblob(3000), 1, 0, 1, 1, 3003), ('dev', 'a/c', zeroblob(3000), 1, 0, 1, 1, 3003),
                   ('dev', 'a/d', x'01', 1, 0, 1, 1, 4), ('dev', 'a/e', x'01', 1, 0, 1, 1, 4)
            """)
        // Rows 3 and 4 delivered: only SQLite's sequence remembers id 4.
        try connection.execute("DELETE FROM outbox WHERE id > 2")
        let pages = try #require(try connection.integer("PRAGMA page_count"))
        _ = try connection.integer("PRAGMA max_page_count = \(pages)")
        let outcome = try OutboxSchema.migrateOrDefer(connection)
        #expect(outcome.applied.isEmpty)
        #expect(outcome.deferred?.version == 5)
        #expect(try connection.userVersion() == 4)
        #expect(!connection.isInTransaction)
        #expect(try connection.integer("SELECT count(*) FROM outbox") == 2)
        // The store, opening such a file, issues ids above the sequence, not above the rows left.
        #expect(try OutboxDatabase.highestIssuedID(connection) == 4)
        // The store's insert names the id; on the AUTOINCREMENT table SQLite keeps its sequence with it.
        try connection.execute(
            """
            INSERT INTO outbox (id, stream, topic, payload, qos, retain, sample_time, enqueued_at, size)
            VALUES (7, 'dev', 'a/d', x'01', 1, 0, 1, 1, 4)
            """)
        #expect(try connection.integer("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") == 7)
        _ = try connection.integer("PRAGMA max_page_count = 1073741823")
        #expect(try OutboxSchema.migrateOrDefer(connection).applied == [5])
        #expect(try connection.integer(OutboxDatabase.highestIssuedIDQuery) == 7)
    }

    @Test func refusesAFileFromANewerVersion() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let newer = try SQLiteConnection(path: path)
            try newer.setUserVersion(OutboxSchema.currentVersion + 1)
        }
        let error = await expectThrows(OutboxError.self) { try await OutboxStore(path: path) }
        #expect(error?.code == .schemaTooNew)
        #expect(FileManager.default.fileExists(atPath: path))  // not moved aside: a newer build may still read it
    }

    @Test func aFailingMigrationLeavesThePreviousVersion() throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let connection = try SQLiteConnection(path: directory.file("o.sqlite").path)
        try OutboxSchema.migrate(connection, upTo: 1)
        // Sabotage step 2: its table already exists, so its CREATE fails inside the step's transaction.
        try connection.execute("CREATE TABLE counters (x INTEGER)")
        let error = try requireThrows(SQLiteError.self) { try OutboxSchema.migrate(connection) }
        #expect(error.code == .error)
        #expect(try connection.userVersion() == 1)
        #expect(!connection.isInTransaction)
    }
}
