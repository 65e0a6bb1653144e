internal import CSQLite
import Timekeeping

/// One SQLite database connection. Closes itself when released.
///
/// Not `Sendable`: a connection belongs to one owner (the outbox store's thread). Every C
/// result code goes through ``check(_:sql:)``, the single funnel that turns failures into
/// ``SQLiteError``.
package final class SQLiteConnection {
    /// How to open the file.
    package enum Mode: Sendable {
        case readWrite
        case readOnly
    }

    let handle: OpaquePointer
    package let path: String
    /// `BEGIN IMMEDIATE` and `COMMIT` of ``transaction(_:)``, compiled at their first use: run
    /// through `sqlite3_exec`, both were parsed again for every transaction, one per reading on the
    /// gateway's outbox thread (issue 20). Raw handles, not ``SQLiteStatement``s, which would keep
    /// this connection alive; finalised before it closes.
    private var begin: OpaquePointer?
    private var commit: OpaquePointer?

    /// Opens (creating when `mode` is `.readWrite`) the database at `path`.
    package init(path: String, mode: Mode = .readWrite, busyTimeout: Duration = .seconds(5)) throws(SQLiteError) {
        _ = Self.pagesOneByOne  // before SQLite initialises itself in its first open
        _ = Self.withoutMemoryStatistics
        var pointer: OpaquePointer?
        let flags: Int32 =
            switch mode {
            case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
            case .readOnly: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            }
        let result = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else {
            throw SQLiteError(code: .noMemory, message: "sqlite3_open_v2 returned no handle for \(path)")
        }
        do {
            try Self.check(result, database: pointer, sql: nil)
        } catch {
            sqlite3_close_v2(pointer)
            throw SQLiteError(
                code: error.code, extendedCode: error.extendedCode, message: "\(error.message) (\(path))")
        }
        sqlite3_extended_result_codes(pointer, 1)
        self.handle = pointer
        self.path = path
        sqlite3_busy_timeout(pointer, Int32(clamping: busyTimeout.inMilliseconds))
    }

    deinit {
        sqlite3_finalize(begin)
        sqlite3_finalize(commit)
        sqlite3_close_v2(handle)
    }

    /// True when SQLite opened the main database read-only although write access was asked for:
    /// the file is write-protected for this process (SQLite then falls back to reading it).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Heap bytes this connection's page cache holds now (`SQLITE_DBSTATUS_CACHE_USED`).
    package var pageCacheBytes: Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }

    /// Checks a result code of this connection (see ``check(_:database:sql:)``).
    @discardableResult
    func check(_ result: Int32, sql: String? = nil) throws(SQLiteError) -> Int32 {
        try Self.check(result, database: handle, sql: sql)
    }

    /// The error funnel: every SQLite result code passes through here. Success codes (`OK`, `ROW`,
    /// `DONE`) are returned; anything else becomes an ``SQLiteError`` with the primary and
    /// extended code and SQLite's message for `database`.
    @discardableResult
    static func check(_ result: Int32, database: OpaquePointer, sql: String?) throws(SQLiteError) -> Int32 {
        switch result {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return result
        default:
            throw SQLiteError(
                code: .init(rawValue: result), extendedCode: sqlite3_extended_errcode(database),
                message: String(cString: sqlite3_errmsg(database)), sql: sql)
        }
    }

    /// Runs one or more statements without results (`CREATE …; INSERT …`).
    package func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql: sql)
    }

    /// Compiles `sql` into a statement that finalises itself.
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql: sql)
        guard let statement else {
            throw SQLiteError(code: .misuse, message: "no statement in SQL", sql: sql)
        }
        return SQLiteStatement(handle: statement, connection: self, sql: sql)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`; any error thrown by `body` (or by the
    /// commit) rolls the transaction back and is rethrown unchanged.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try step(&begin, "BEGIN IMMEDIATE")
        do {
            let value = try body()
            try step(&commit, "COMMIT")
            return value
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Runs a statement without parameters or rows, compiled into `statement` at its first use.
    private func step(_ statement: inout OpaquePointer?, _ sql: String) throws(SQLiteError) {
        if statement == nil {
            try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql: sql)
        }
        // Reset after the error (if any) was read: the next transaction starts from a clean statement.
        defer { sqlite3_reset(statement) }
        try check(sqlite3_step(statement), sql: sql)
    }

    /// True while a transaction is open.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last successful INSERT.
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The first column of the first row of `sql`, as an integer (nil when there is no row).
    package func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.int64(at: 0) : nil
    }

    /// The first column of every row of `sql`, as text.
    package func texts(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(at: 0)) }
        return rows
    }

    /// `PRAGMA user_version`: the schema version this file was migrated to.
    package func userVersion() throws(SQLiteError) -> Int {
        Int(try integer("PRAGMA user_version") ?? 0)
    }

    package func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }
}
