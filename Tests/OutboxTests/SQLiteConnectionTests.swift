import Foundation
import TestSupport
import Testing

@testable import Outbox

@Suite struct SQLiteConnectionTests {
    struct Abort: Error {}

    private func openTable() throws -> (TemporaryDirectory, SQLiteConnection) {
        let directory = try TemporaryDirectory(prefix: "sqlite")
        let connection = try SQLiteConnection(path: directory.file("t.sqlite").path)
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)")
        return (directory, connection)
    }

    /// The page cache takes its pages from the heap one at a time, not from a block of 20
    /// allocated at its first page and freed with its last: the outbox allocated and freed that
    /// 87 kB block at nearly every transaction, and it raised the gateway's resident heap in steps
    /// (docs/testing.md, "Soak"). SQLite counts pages taken on their own (`PAGECACHE_OVERFLOW`, in
    /// every connection of the process), not those from the block: with the block, reading these
    /// 12 or so pages counted none of them (8,200 bytes: scratch pages), one by one over 50 kB.
    @Test func pageCacheTakesItsPagesOneByOne() throws {
        let (directory, connection) = try openTable()
        _ = directory
        #expect(SQLiteConnection.pagesOneByOne)
        for _ in 0..<10 { try connection.execute("INSERT INTO t (data) VALUES (zeroblob(3000))") }
        try connection.execute("BEGIN")
        #expect(try connection.integer("SELECT sum(length(data)) FROM t") == 30_000)
        #expect(SQLiteConnection.pageCacheHeapBytes >= 10 * 4096)
        try connection.execute("COMMIT")
    }

    /// SQLite keeps no allocation statistics (each of its allocations took a global mutex to count
    /// itself, about seven a reading on the outbox thread): set before the first open, so it holds
    /// in every process that opens a connection through this type first.
    @Test func sqliteCountsNoAllocations() throws {
        let (directory, connection) = try openTable()
        _ = directory
        #expect(SQLiteConnection.withoutMemoryStatistics)
        for _ in 0..<10 { try connection.execute("INSERT INTO t (data) VALUES (zeroblob(3000))") }
        #expect(SQLiteConnection.countedMemoryBytes == 0)
    }

    @Test func transactionRollsBackWhenTheBodyThrows() throws {
        let (directory, connection) = try openTable()
        _ = directory
        #expect(throws: Abort.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t (name) VALUES ('a')")
                throw Abort()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try connection.integer("SELECT count(*) FROM t") == 0)
    }

    @Test func transactionRollsBackWhenAStatementFails() throws {
        let (directory, connection) = try openTable()
        _ = directory
        let error = try requireThrows(SQLiteError.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t (name) VALUES ('a')")
                try connection.execute("INSERT INTO t (name) VALUES ('a')")
            }
        }
        #expect(error.code == .constraint)
        #expect(error.sql == "INSERT INTO t (name) VALUES ('a')")
        #expect(try connection.integer("SELECT count(*) FROM t") == 0)
    }

    @Test func transactionCommits() throws {
        let (directory, connection) = try openTable()
        _ = directory
        let value = try connection.transaction {
            try connection.execute("INSERT INTO t (name) VALUES ('a'), ('b')")
            return connection.changes
        }
        #expect(value == 2)
        #expect(try connection.integer("SELECT count(*) FROM t") == 2)
    }

    @Test func valuesRoundTrip() throws {
        let (directory, connection) = try openTable()
        _ = directory
        let insert = try connection.prepare("INSERT INTO t (name, data) VALUES (?, ?)")
        try insert.run([.text("ä \u{1F600}"), .blob([0, 1, 255])])
        try insert.run([.text("empty"), .blob([])])
        try insert.run([nil, nil])
        // An empty string is text, not NULL; a bridged (non-native) string binds as well.
        try insert.run([.text(""), nil])
        try insert.run([.text(String(NSString(string: "bridged ü"))), nil])
        let select = try connection.prepare("SELECT name, data FROM t ORDER BY id")
        try select.bind([])
        #expect(try select.step())
        #expect(select.text(at: 0) == "ä \u{1F600}")
        #expect(select.blob(at: 1) == [0, 1, 255])
        #expect(try select.step())
        #expect(select.blob(at: 1) == [])
        #expect(!select.isNull(at: 1))
        #expect(try select.step())
        #expect(select.isNull(at: 0))
        #expect(try select.step())
        #expect(!select.isNull(at: 0))
        #expect(select.text(at: 0) == "")
        #expect(try select.step())
        #expect(select.text(at: 0) == "bridged ü")
        #expect(try !select.step())
    }

    @Test func errorsCarryTheirResultCode() throws {
        let (directory, connection) = try openTable()
        let syntax = try requireThrows(SQLiteError.self) { try connection.prepare("SELEC 1") }
        #expect(syntax.code == .error)

        let garbage = try directory.write("garbage.sqlite", String(repeating: "not a database ", count: 200))
        let notADatabase = try requireThrows(SQLiteError.self) {
            let other = try SQLiteConnection(path: garbage.path)
            _ = try other.integer("SELECT count(*) FROM sqlite_master")
        }
        #expect(notADatabase.code == .notADatabase)

        let readOnly = try SQLiteConnection(path: directory.file("t.sqlite").path, mode: .readOnly)
        let write = try requireThrows(SQLiteError.self) { try readOnly.execute("INSERT INTO t (name) VALUES ('x')") }
        #expect(write.code == .readOnly)
        #expect(OutboxError(write).code == .readOnly)

        let missing = try requireThrows(SQLiteError.self) {
            _ = try SQLiteConnection(path: directory.file("no/such/dir/x.sqlite").path)
        }
        #expect(missing.code == .cantOpen)
        #expect(OutboxError(missing).code == .cannotOpen)
    }

    @Test func extendedCodesReduceToThePrimaryCode() {
        // SQLITE_IOERR_FSYNC = SQLITE_IOERR | (4 << 8)
        let error = SQLiteError(code: .init(rawValue: 10 | (4 << 8)), extendedCode: 10 | (4 << 8), message: "fsync")
        #expect(error.code == .ioError)
        #expect(error.extendedCode == 1034)
        #expect(OutboxError(SQLiteError(code: .full, message: "")).code == .diskFull)
        #expect(OutboxError(SQLiteError(code: .busy, message: "")).code == .locked)
        #expect(OutboxError(SQLiteError(code: .corrupt, message: "")).code == .corrupt)
    }
}
