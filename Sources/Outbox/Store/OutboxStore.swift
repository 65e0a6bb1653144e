import EventLoop
import Foundation
import Logging
import Timekeeping

/// The store-and-forward queue: readings wait here, in SQLite (WAL), until the broker has
/// acknowledged them.
///
/// An actor pinned to its own ``EventLoop`` (the `blebridge.outbox` thread: SQLite calls may block
/// on `fsync` or a lock, so never on the cooperative pool). Entries get strictly increasing ids in append order; ``next(after:limit:)``
/// returns them in that order, so every stream's order is kept. Entries leave only through
/// ``remove(ids:)`` (after acknowledgement) or the caps (oldest first, counted by reason).
///
/// Opening checks the file (`PRAGMA quick_check`); a corrupt file is moved aside to
/// `<path>.corrupt-<UTC timestamp>`, an error is logged, and a fresh queue starts
/// (``recoveredCorruptFile`` says where the old one went).
package actor OutboxStore {
    /// The thread the store's jobs run on; ``run(_:)`` and ``run(after:_:)`` run closures and timers
    /// there, timers on the loop's clock.
    package nonisolated let loop: EventLoop
    package nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    package nonisolated let path: String
    package nonisolated let options: OutboxOptions
    private let logger: Logger
    /// When a reading is enqueued and when the age cap (`maxAge`) expires it; the state table's
    /// change times and the name a corrupt file is moved aside to. (The thread's timers read the
    /// loop's clock.)
    let clock: any BridgeClock
    private var database: OutboxDatabase?
    /// Where a corrupt file found at open was moved, if one was.
    package private(set) var recoveredCorruptFile: String?

    /// Opens the queue at `path` (created when missing), migrating its schema and repairing
    /// a corrupt file by starting fresh. The store runs on `loop`, by default a new
    /// `blebridge.outbox` loop on the real clock (a test passes one on a ``ManualClock`` to move
    /// the timers of the store's thread by hand).
    package init(
        path: String, options: OutboxOptions = OutboxOptions(), logger: Logger = Logger(label: "outbox"),
        clock: any BridgeClock = SystemClock(), loop: EventLoop? = nil
    ) async throws(OutboxError) {
        do {
            self.loop = try loop ?? EventLoop(name: "blebridge.outbox")
        } catch {
            throw OutboxError(.cannotOpen, "cannot start the outbox thread: \(error)")
        }
        self.path = path
        self.options = options
        self.logger = logger
        self.clock = clock
        // From here on the initializer runs on the store's own thread.
        do {
            try openDatabase()
        } catch {
            throw OutboxError.classifying(error, path: path)
        }
    }

    private func openDatabase() throws {
        do {
            let database = try OutboxDatabase(path: path, options: options)
            if options.checkIntegrityOnOpen, let problems = try database.integrityProblems() {
                throw OutboxError(.corrupt, problems)
            }
            self.database = database
        } catch let error as OutboxError where error.code == .corrupt {
            try recover(from: error.message)
        } catch let error as SQLiteError where error.code == .corrupt || error.code == .notADatabase {
            try recover(from: error.description)
        }
        if let database {
            for file in database.tightened {
                logger.notice(
                    "outbox file was readable by every user; that access is taken away",
                    [("file", file.file), ("mode", file.from), ("now", file.to)])
            }
            if let step = database.deferredMigration {
                logger.notice(
                    "outbox schema step left for a later start: the disk is full (the outbox works without it)",
                    [("step", "\(step.version)"), ("summary", step.summary), ("path", path)])
            }
            logger.info(
                "outbox open",
                [("path", path), ("depth", "\(database.depth)"), ("synchronous", options.synchronous.rawValue)])
        }
    }

    /// Moves the corrupt file (and its WAL and shared-memory files) aside and opens a fresh one.
    private func recover(from problem: String) throws {
        database = nil
        let stamp = Timestamp.compact(clock.date)
        let aside = "\(path).corrupt-\(stamp)"
        let files = FileManager.default
        try? files.removeItem(atPath: aside)
        try files.moveItem(atPath: path, toPath: aside)
        for suffix in ["-wal", "-shm"] where files.fileExists(atPath: path + suffix) {
            try? files.removeItem(atPath: aside + suffix)
            try files.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        recoveredCorruptFile = aside
        logger.error(
            "OUTBOX DATABASE CORRUPT: moved aside, starting with an EMPTY queue; readings still in the old file "
                + "were not delivered",
            [("path", path), ("moved_to", aside), ("problem", problem)])
        database = try OutboxDatabase(path: path, options: options)
    }

    private func withDatabase<T>(_ body: (OutboxDatabase) throws -> T) throws(OutboxError) -> T {
        guard let database else { throw OutboxError(.closed, "\(path) is closed") }
        do {
            return try body(database)
        } catch {
            throw OutboxError.classifying(error, path: path)
        }
    }

    // MARK: - Queue

    /// Appends `entries` in one transaction and applies the caps; returns their ids (increasing).
    @discardableResult
    package func append(_ entries: [OutboxEntry]) throws(OutboxError) -> [Int64] {
        let now = clock.date
        return try withDatabase { try $0.append(entries, now: now) }
    }

    /// Appends `entries` in one transaction and applies the caps; returns them as stored (ids increasing),
    /// so a caller that publishes them at once need not read them back. Entries a cap removed at once
    /// (a batch larger than `maxMessages`) are not returned.
    ///
    /// `acknowledged`: entries to remove as ``remove(ids:)`` does, in the same transaction (first), so
    /// a driver that has both pays for one; when the append fails they stay too.
    package func appendRecords(
        _ entries: [OutboxEntry], removing acknowledged: [Int64] = []
    ) throws(OutboxError) -> [OutboxRecord] {
        try withDatabase { database in
            let now = clock.date
            let ids = try database.append(entries, now: now, removing: acknowledged)
            let enqueuedAt = OutboxDatabase.date(OutboxDatabase.microseconds(now))
            // The rows the caps kept are the last ones. By index: `suffix` of a zip (a sequence, not
            // a collection) gathered every pair in a buffer of its own first (issue 20).
            let kept = min(ids.count, database.depth)
            return (ids.count - kept..<ids.count).map { index in
                // The sample time as stored (to the microsecond), so a row published now and the same
                // row read back for a re-send carry the same time.
                var stored = entries[index]
                stored.sampleTime = OutboxDatabase.date(OutboxDatabase.microseconds(stored.sampleTime))
                return OutboxRecord(id: ids[index], entry: stored, enqueuedAt: enqueuedAt)
            }
        }
    }

    /// Appends one entry (one transaction); returns its id.
    @discardableResult
    package func append(_ entry: OutboxEntry) throws(OutboxError) -> Int64 {
        let now = clock.date
        return try withDatabase { try $0.append([entry], now: now)[0] }
    }

    /// SQL giving the highest row id a store's file ever issued (0 when none), for readers of the
    /// file through another connection (tests, tools).
    package static var highestIssuedIDQuery: String { OutboxDatabase.highestIssuedIDQuery }

    /// Up to `limit` waiting records with ids greater than `id` (from the oldest when nil), oldest first.
    package func next(after id: Int64? = nil, limit: Int) throws(OutboxError) -> [OutboxRecord] {
        try withDatabase { try $0.records(after: id ?? 0, limit: limit) }
    }

    /// Removes acknowledged entries (one transaction) and counts them as delivered.
    /// Ids that are already gone (for example dropped by a cap) are ignored. Returns how many were removed.
    @discardableResult
    package func remove(ids: [Int64]) throws(OutboxError) -> Int {
        try withDatabase { try $0.remove(ids: ids) }
    }

    /// Removes entries that can never be delivered (for example refused by the broker), counting
    /// them as dropped for `reason`. Returns how many were removed.
    @discardableResult
    package func drop(ids: [Int64], reason: OutboxDropReason) throws(OutboxError) -> Int {
        try withDatabase { try $0.drop(ids: ids, reason: reason) }
    }

    /// Adds `count` to the persisted drop counter of `reason`: drops that happened before the entries
    /// reached the store (the publisher's memory hold), so ``stats()`` counts them across restarts.
    package func countDropped(_ count: Int, reason: OutboxDropReason) throws(OutboxError) {
        try withDatabase { try $0.countDropped(count, reason: reason) }
    }

    /// Applies the age cap now (every append applies all caps on its own).
    package func purgeExpired() throws(OutboxError) {
        let now = clock.date
        try withDatabase { try $0.purgeExpired(now: now) }
    }

    /// Entries waiting now, as counted in memory (no query); 0 once closed.
    package var depth: Int { database?.depth ?? 0 }

    package func stats() throws(OutboxError) -> OutboxStats {
        try withDatabase { try $0.stats() }
    }

    // MARK: - Running on the store's thread

    /// Runs `body` on the store's thread, isolated to the store, after the work already queued there.
    /// For drivers that react to callbacks from other threads (acknowledgements) without a detour
    /// through the cooperative pool; an actor whose `unownedExecutor` is the store's may
    /// `assumeIsolated` inside `body`. Keep `body` short: it holds up every outbox operation.
    package nonisolated func run(_ body: @escaping @Sendable (isolated OutboxStore) -> Void) {
        loop.execute { self.assumeIsolated { body($0) } }
    }

    /// Runs `body` like ``run(_:)`` once the loop's clock reaches `deadline`.
    package nonisolated func run(
        at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (isolated OutboxStore) -> Void
    ) {
        loop.schedule(at: deadline) { self.assumeIsolated { body($0) } }
    }

    /// Runs `body` like ``run(_:)`` once `delay` has passed on the loop's clock.
    package nonisolated func run(after delay: Duration, _ body: @escaping @Sendable (isolated OutboxStore) -> Void) {
        loop.schedule(after: delay) { self.assumeIsolated { body($0) } }
    }

    /// Closes the database; later calls throw `.closed`.
    package func close() {
        database = nil
    }

    /// Test access to the connection (for example to set `max_page_count` or hold a lock).
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws(OutboxError) -> T {
        try withDatabase { try body($0.connection) }
    }
}
