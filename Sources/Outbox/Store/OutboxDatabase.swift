import Foundation
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// The synchronous core of the outbox: one SQLite connection and its cached statements.
///
/// Owned by ``OutboxStore``, which runs every call on its own thread.
final class OutboxDatabase {
    let connection: SQLiteConnection
    let options: OutboxOptions
    private(set) var depth: Int
    private(set) var bytes: Int
    /// The highest row id this file ever had: the next append takes the ids above it. Read at open
    /// from the rows and from `ids.issued` in `counters`, which every transaction that deletes rows
    /// brings up to date, so an id is never issued twice, even after the queue emptied or a restart.
    private var lastIssuedID: Int64
    /// Full-disk handling (see ``OutboxSpacePolicy``).
    var space: OutboxSpacePolicy
    /// The reserve file kept next to the database (`<path>-reserve`).
    let reservePath: String
    /// `PRAGMA max_page_count` as it was at open (restored when the database is unpinned).
    let unpinnedPageLimit: Int64
    /// A schema step left for a later open because the disk was full (``OutboxSchema/Migration/deferrableWhenFull``).
    let deferredMigration: OutboxSchema.Migration?
    /// The files whose access by every user was taken away at open (``withdrawOthersAccess(_:)``).
    let tightened: [(file: String, from: String, to: String)]

    private let insert: SQLiteStatement
    private let selectAfter: SQLiteStatement
    private let measureRange: SQLiteStatement
    private let deleteRange: SQLiteStatement
    private let deleteThrough: SQLiteStatement
    private let scanHead: SQLiteStatement
    private let addCounter: SQLiteStatement
    private let readCounters: SQLiteStatement
    private let recordIssued: SQLiteStatement
    private let selectOldest: SQLiteStatement

    /// The page cache's bound (`PRAGMA cache_size`), in KiB: 32 pages of 4 KiB. A queue's hot pages are
    /// about a dozen (the first page, the table's root and interior pages, the leaf rows are appended
    /// to and the one they are deleted from, the free list, the counters, the kv state);
    /// a backlog is read once, in order, from the OS's file cache. The cache keeps every page it took
    /// until it is full, and the queue moves through the whole file, so it always fills up, a page at
    /// a time: at SQLite's default (2,000 KiB) `RssAnon` crept 4–8 kB a minute in `make soak` (84 kB
    /// in a 20-minute day, 2026-12-04) towards a plateau at the file's size, hours away; at 256 KiB it
    /// still crept at minutes 11–15 of the day; at 128 KiB the soak's slope fell to +1.6 %/h (one run).
    static let pageCacheKiB = 128

    /// Opens (creating and migrating as needed) the database at `path`.
    init(path: String, options: OutboxOptions) throws {
        Self.createPrivately(path)
        tightened = Self.withdrawOthersAccess(path)
        let connection = try SQLiteConnection(path: path, busyTimeout: options.busyTimeout)
        // An outbox this process cannot write would hold every reading in memory until it is lost
        // at the stop (seen in `make faults`, issue 19): refuse it at open, saying what to fix.
        guard !connection.isReadOnly else {
            throw OutboxError(
                .readOnly,
                "\(path) is read-only for this process (user \(Self.userName)): make the file and its "
                    + "directory writable by that user, or choose another outbox.path")
        }
        let journal = try connection.texts("PRAGMA journal_mode = WAL").first ?? ""
        guard journal.lowercased() == "wal" else {
            throw OutboxError(.database, "\(path): could not switch to WAL journal mode (got '\(journal)')")
        }
        try connection.execute("PRAGMA synchronous = \(options.synchronous.pragmaValue)")
        try connection.execute("PRAGMA cache_size = -\(Self.pageCacheKiB)")
        deferredMigration = try OutboxSchema.migrateOrDefer(connection).deferred
        self.connection = connection
        self.options = options
        space = OutboxSpacePolicy(reserve: options.diskReserve)
        reservePath = path + "-reserve"
        unpinnedPageLimit = try connection.integer("PRAGMA max_page_count") ?? 1_073_741_823
        try Self.boundWAL(connection, reserve: options.diskReserve)
        insert = try connection.prepare(
            """
            INSERT INTO outbox (id, stream, topic, payload, qos, retain, sample_time, enqueued_at, size)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        selectAfter = try connection.prepare(
            """
            SELECT id, stream, topic, payload, qos, retain, sample_time, enqueued_at FROM outbox
            WHERE id > ? ORDER BY id LIMIT ?
            """)
        // Counted and summed by a read before the deletion, not by `DELETE … RETURNING size`: SQLite
        // gathers RETURNING rows in an ephemeral table, whose pager (a page buffer allocated and
        // freed in each deletion) cost 5 % of the outbox thread at 25,000 readings/s (issue 20).
        measureRange = try connection.prepare(
            "SELECT count(*), coalesce(sum(size), 0) FROM outbox WHERE id BETWEEN ? AND ?")
        deleteRange = try connection.prepare("DELETE FROM outbox WHERE id BETWEEN ? AND ?")
        deleteThrough = try connection.prepare("DELETE FROM outbox WHERE id <= ?")
        scanHead = try connection.prepare("SELECT id, size, sample_time FROM outbox ORDER BY id")
        addCounter = try connection.prepare(
            """
            INSERT INTO counters (value, name) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = value + excluded.value
            """)
        readCounters = try connection.prepare("SELECT name, value FROM counters")
        recordIssued = try connection.prepare(
            """
            INSERT INTO counters (name, value) VALUES ('\(Self.issuedCounter)', ?)
            ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)
            """)
        selectOldest = try connection.prepare("SELECT sample_time FROM outbox ORDER BY id LIMIT 1")
        let totals = try connection.prepare("SELECT count(*), coalesce(sum(size), 0) FROM outbox")
        _ = try totals.step()
        depth = Int(totals.int64(at: 0))
        bytes = Int(totals.int64(at: 1))
        lastIssuedID = try Self.highestIssuedID(connection)
        prepareReserve()
    }

    /// The name of the user this process runs as (its uid when it has no name).
    static var userName: String {
        let uid = getuid()
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return String(cString: name)
    }

    /// `PRAGMA quick_check`: nil when the file is sound, else SQLite's findings.
    func integrityProblems() throws -> String? {
        let rows = try connection.texts("PRAGMA quick_check")
        return rows == ["ok"] ? nil : rows.prefix(5).joined(separator: "; ")
    }

    // MARK: - Queue

    /// Appends `entries` in one transaction, then applies the caps. Returns the new row ids.
    /// `acknowledged` rows are deleted in the same transaction first and counted as delivered
    /// (``remove(ids:)`` without a transaction of its own); when the append fails, they stay.
    func append(_ entries: [OutboxEntry], now: Date, removing acknowledged: [Int64] = []) throws -> [Int64] {
        guard !entries.isEmpty else {
            if !acknowledged.isEmpty { try remove(ids: acknowledged) }
            return []
        }
        if let large = entries.first(where: { $0.size > options.maxBytes }) {
            throw OutboxError(
                .entryTooLarge, "entry of \(large.size) bytes for \(large.topic) exceeds the cap of \(options.maxBytes)"
            )
        }
        observeSpace()
        let ids: [Int64]
        do {
            ids = try insertRows(entries, now: now, removing: acknowledged)
        } catch let error as SQLiteError where error.code == .constraint {
            // Another connection appended to this file (a second process given the same
            // outbox.path) and took the ids this store meant to issue: read the highest again.
            lastIssuedID = max(lastIssuedID, try Self.highestIssuedID(connection))
            ids = try insertRows(entries, now: now, removing: acknowledged)
        }
        return ids
    }

    /// ``append(_:now:removing:)``'s transaction: the acknowledged rows deleted, the rows with the
    /// ids after ``lastIssuedID``, then the caps.
    private func insertRows(_ entries: [OutboxEntry], now: Date, removing acknowledged: [Int64]) throws -> [Int64] {
        let enqueued = Self.microseconds(now)
        let firstID = lastIssuedID + 1
        var ids: [Int64] = []
        ids.reserveCapacity(entries.count)
        // A refused append is not retried here: the caller holds the readings and tries again, and
        // the space released for the full disk stays for deletions meanwhile.
        let (newDepth, newBytes) = try whenSpaceRunsOut(retry: false) {
            try connection.transaction {
                // One transaction instead of two: each costs its locks, a WAL frame per page it
                // changes and its share of checkpoints, and deletions and appends change the same
                // pages (the queue's ends, the counters; issue 20).
                let (removed, removedBytes) = try deleteRowsInTransaction(
                    acknowledged, counter: Self.deliveredCounter, issued: firstID + Int64(entries.count - 1))
                var addedBytes = 0
                for (offset, entry) in entries.enumerated() {
                    let id = firstID + Int64(offset)
                    try insert.run([
                        .integer(id), .text(entry.stream), .text(entry.topic), .blob(entry.payload),
                        .integer(Int64(entry.qos.rawValue)),
                        .integer(entry.retain ? 1 : 0), .integer(Self.microseconds(entry.sampleTime)),
                        .integer(enqueued),
                        .integer(Int64(entry.size)),
                    ])
                    ids.append(id)
                    addedBytes += entry.size
                }
                return try applyCaps(
                    depth: depth - removed + entries.count, bytes: bytes - removedBytes + addedBytes, now: now,
                    issued: firstID + Int64(entries.count - 1))
            }
        }
        lastIssuedID = ids.last ?? lastIssuedID
        depth = newDepth
        bytes = newBytes
        return ids
    }

    /// Up to `limit` records with ids greater than `id`, oldest first.
    func records(after id: Int64, limit: Int) throws -> [OutboxRecord] {
        try selectAfter.bind([.integer(id), .integer(Int64(limit))])
        defer { selectAfter.reset() }
        var records: [OutboxRecord] = []
        while try selectAfter.step() {
            let entry = OutboxEntry(
                topic: selectAfter.text(at: 2), payload: selectAfter.blob(at: 3),
                qos: OutboxQoS(rawValue: Int(selectAfter.int64(at: 4))) ?? .atLeastOnce,
                retain: selectAfter.int64(at: 5) != 0, sampleTime: Self.date(selectAfter.int64(at: 6)),
                stream: selectAfter.text(at: 1))
            records.append(
                OutboxRecord(
                    id: selectAfter.int64(at: 0), entry: entry, enqueuedAt: Self.date(selectAfter.int64(at: 7))))
        }
        return records
    }

    /// Deletes acknowledged entries in one transaction, counting them as delivered; returns how many existed.
    @discardableResult
    func remove(ids: [Int64]) throws -> Int {
        try delete(ids: ids, counter: Self.deliveredCounter)
    }

    /// The `counters` row of the readings the broker acknowledged.
    static let deliveredCounter = "delivered"

    /// Deletes entries that will never be delivered, counting them under `reason`.
    @discardableResult
    func drop(ids: [Int64], reason: OutboxDropReason) throws -> Int {
        try delete(ids: ids, counter: reason.counterName)
    }

    private func delete(ids: [Int64], counter: String) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let (removed, removedBytes) = try whenSpaceRunsOut(retry: true) { try deleteRows(ids, counter: counter) }
        depth -= removed
        bytes -= removedBytes
        return removed
    }

    /// Deletes `ids` in one transaction, one statement per run of consecutive ids: acknowledgements
    /// mostly come in order, so a batch of them is usually one range (one statement per id cost a
    /// bind, a step and a reset each).
    private func deleteRows(_ ids: [Int64], counter: String) throws -> (Int, Int) {
        try connection.transaction { try deleteRowsInTransaction(ids, counter: counter, issued: lastIssuedID) }
    }

    /// ``deleteRows(_:counter:)`` inside the caller's transaction, whose rows have ids up to
    /// `issued`; returns how many rows and payload bytes went.
    private func deleteRowsInTransaction(_ ids: [Int64], counter: String, issued: Int64) throws -> (Int, Int) {
        guard !ids.isEmpty else { return (0, 0) }
        var removed = 0
        var removedBytes = 0
        for run in Self.consecutiveRuns(ids) {
            let bounds: [SQLiteValue] = [.integer(run.lowerBound), .integer(run.upperBound)]
            try measureRange.bind(bounds)
            let measured = try measureRange.step()
            let (count, size) = measured ? (measureRange.int64(at: 0), measureRange.int64(at: 1)) : (0, 0)
            measureRange.reset()  // no read open on the table while the deletion runs
            guard count > 0 else { continue }
            removed += Int(count)
            removedBytes += Int(size)
            try deleteRange.run(bounds)
        }
        if removed > 0 {
            try addCounter.run([.integer(Int64(removed)), .text(counter)])
            try recordIssued.run([.integer(issued)])
        }
        return (removed, removedBytes)
    }

    /// `ids` sorted, without repeats, as closed ranges of consecutive ids.
    static func consecutiveRuns(_ ids: [Int64]) -> [ClosedRange<Int64>] {
        var runs: [ClosedRange<Int64>] = []
        for id in ids.sorted() {
            if let last = runs.last, id <= last.upperBound + 1 {
                if id > last.upperBound { runs[runs.count - 1] = last.lowerBound...id }
            } else {
                runs.append(id...id)
            }
        }
        return runs
    }

    /// Adds `count` to the persisted drop counter of `reason` (for drops that happened outside the
    /// database, such as the publisher's memory hold).
    func countDropped(_ count: Int, reason: OutboxDropReason) throws {
        guard count > 0 else { return }
        try whenSpaceRunsOut(retry: true) {
            try addCounter.run([.integer(Int64(count)), .text(reason.counterName)])
        }
    }

    /// Applies the age cap now (appends apply every cap themselves).
    func purgeExpired(now: Date) throws {
        let (newDepth, newBytes) = try whenSpaceRunsOut(retry: true) {
            try connection.transaction { try applyCaps(depth: depth, bytes: bytes, now: now, issued: lastIssuedID) }
        }
        depth = newDepth
        bytes = newBytes
    }

    func stats() throws -> OutboxStats {
        var dropped: [OutboxDropReason: Int64] = [:]
        var delivered: Int64 = 0
        try readCounters.bind([])
        defer { readCounters.reset() }
        while try readCounters.step() {
            let name = readCounters.text(at: 0)
            let value = readCounters.int64(at: 1)
            if name == Self.deliveredCounter {
                delivered = value
            } else if let reason = OutboxDropReason.allCases.first(where: { $0.counterName == name }) {
                dropped[reason] = value
            }
        }
        try selectOldest.bind([])
        defer { selectOldest.reset() }
        let oldest = try selectOldest.step() ? Self.date(selectOldest.int64(at: 0)) : nil
        return OutboxStats(depth: depth, bytes: bytes, oldestSampleTime: oldest, dropped: dropped, delivered: delivered)
    }

    // MARK: - Caps

    /// Drops the oldest rows while a cap is exceeded, counting each drop under its reason.
    /// Runs inside the caller's transaction, whose rows have ids up to `issued`; returns the new depth
    /// and bytes.
    private func applyCaps(depth: Int, bytes: Int, now: Date, issued: Int64) throws -> (Int, Int) {
        let cutoff = Self.microseconds(now) - options.maxAge.inMicroseconds
        let oldest = try oldestSampleMicroseconds() ?? .max
        guard depth > options.maxMessages || bytes > options.maxBytes || oldest < cutoff else { return (depth, bytes) }
        var depth = depth
        var bytes = bytes
        var counts: [OutboxDropReason: Int64] = [:]
        var lastDropped: Int64?
        try scanHead.bind([])
        defer { scanHead.reset() }
        while try scanHead.step() {
            let reason: OutboxDropReason
            if scanHead.int64(at: 2) < cutoff {
                reason = .age
            } else if depth > options.maxMessages {
                reason = .count
            } else if bytes > options.maxBytes {
                reason = .bytes
            } else {
                break
            }
            lastDropped = scanHead.int64(at: 0)
            depth -= 1
            bytes -= Int(scanHead.int64(at: 1))
            counts[reason, default: 0] += 1
        }
        scanHead.reset()
        if let lastDropped {
            try deleteThrough.run([.integer(lastDropped)])
            try recordIssued.run([.integer(issued)])
        }
        for (reason, count) in counts { try addCounter.run([.integer(count), .text(reason.counterName)]) }
        return (depth, bytes)
    }

    private func oldestSampleMicroseconds() throws -> Int64? {
        defer { selectOldest.reset() }
        return try selectOldest.step() ? selectOldest.int64(at: 0) : nil
    }

    /// The `counters` row that keeps the highest id issued across deletions and restarts.
    static let issuedCounter = "ids.issued"

    /// The highest row id a file ever had (0 when no row was ever written): the rows', or the one
    /// `ids.issued` kept when rows were deleted. Tests read it through a second connection.
    static let highestIssuedIDQuery = """
        SELECT max(coalesce((SELECT max(id) FROM outbox), 0),
                   coalesce((SELECT value FROM counters WHERE name = '\(issuedCounter)'), 0))
        """

    /// ``highestIssuedIDQuery``, and SQLite's own sequence where the queue table still has one: a
    /// file whose schema step 5 waits for room (``deferredMigration``) keeps its `AUTOINCREMENT`
    /// table, whose sequence may be above every row left and was never copied to `ids.issued`.
    static func highestIssuedID(_ connection: SQLiteConnection) throws -> Int64 {
        var highest = try connection.integer(highestIssuedIDQuery) ?? 0
        if try connection.integer("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") ?? 0 > 0 {
            let sequence = "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'outbox'"
            highest = max(highest, try connection.integer(sequence) ?? 0)
        }
        return highest
    }

    // MARK: - Time

    static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    static func date(_ microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}
