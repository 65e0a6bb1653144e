/// The outbox's schema history. `PRAGMA user_version` records how far a file has been
/// migrated; opening applies the missing steps in order, each in its own transaction, so a
/// failed step leaves the file at the previous version.
enum OutboxSchema {
    struct Migration: Sendable {
        let version: Int
        let summary: String
        let sql: String
        /// A step the code works without (it only makes the file cheaper to write), which copies
        /// the queue: on a full disk it is left for a later open instead of refusing the file.
        var deferrableWhenFull = false
    }

    /// What opening did to the file's schema.
    struct Outcome: Sendable {
        /// The versions applied, in order.
        var applied: [Int] = []
        /// A ``Migration/deferrableWhenFull`` step the disk had no room for; it and the steps
        /// after it run at a later open.
        var deferred: Migration?
    }

    static let migrations: [Migration] = [
        Migration(
            version: 1, summary: "queue table",
            sql: """
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    stream TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    qos INTEGER NOT NULL CHECK (qos BETWEEN 0 AND 2),
                    retain INTEGER NOT NULL,
                    sample_time INTEGER NOT NULL,
                    enqueued_at INTEGER NOT NULL
                );
                """),
        Migration(
            version: 2, summary: "persisted counters (drops by reason, deliveries)",
            sql: """
                CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                INSERT INTO counters (name, value) VALUES
                    ('dropped.count', 0), ('dropped.bytes', 0), ('dropped.age', 0), ('delivered', 0);
                """),
        Migration(
            version: 3, summary: "per-row size for the byte cap",
            sql: """
                ALTER TABLE outbox ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
                UPDATE outbox SET size = length(CAST(topic AS BLOB)) + length(payload);
                """),
        Migration(
            version: 4, summary: "key-value state kept with the queue (gateway restoration)",
            sql: """
                CREATE TABLE IF NOT EXISTS kv_state (
                    key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, updated REAL NOT NULL
                );
                """),
        // AUTOINCREMENT wrote SQLite's `sqlite_sequence` row in every append: one page more per commit
        // in the WAL (and in every checkpoint). The store now issues the ids itself, one above the
        // highest it ever issued, kept in `counters` as `ids.issued` by each transaction that deletes rows
        // (which writes that page anyway), so ids still never go back after the queue empties or a restart.
        Migration(
            version: 5, summary: "queue ids issued by the store (no AUTOINCREMENT)",
            sql: """
                CREATE TABLE outbox_v5 (
                    id INTEGER PRIMARY KEY,
                    stream TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    qos INTEGER NOT NULL CHECK (qos BETWEEN 0 AND 2),
                    retain INTEGER NOT NULL,
                    sample_time INTEGER NOT NULL,
                    enqueued_at INTEGER NOT NULL,
                    size INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO outbox_v5 (id, stream, topic, payload, qos, retain, sample_time, enqueued_at, size)
                    SELECT id, stream, topic, payload, qos, retain, sample_time, enqueued_at, size FROM outbox;
                INSERT INTO counters (name, value)
                    VALUES ('ids.issued', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0))
                    ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value);
                DROP TABLE outbox;
                ALTER TABLE outbox_v5 RENAME TO outbox;
                """, deferrableWhenFull: true),
    ]

    static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// Brings `connection` from its `user_version` up to `target` (the latest by default).
    /// Returns the versions applied.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, upTo target: Int = currentVersion) throws -> [Int] {
        try migrateOrDefer(connection, upTo: target).applied
    }

    /// ``migrate(_:upTo:)``, except that a ``Migration/deferrableWhenFull`` step refused for lack of
    /// space (`SQLITE_FULL`, rolled back) ends the run without an error: the file stays at the
    /// version before it, which this build still reads and writes.
    static func migrateOrDefer(_ connection: SQLiteConnection, upTo target: Int = currentVersion) throws -> Outcome {
        let found = try connection.userVersion()
        if found > currentVersion {
            throw OutboxError(
                .schemaTooNew,
                "\(connection.path) has schema version \(found); this build knows up to \(currentVersion)")
        }
        var outcome = Outcome()
        for migration in migrations where migration.version > found && migration.version <= target {
            do {
                try connection.transaction {
                    try connection.execute(migration.sql)
                    try connection.setUserVersion(migration.version)
                }
            } catch let error as SQLiteError where error.code == .full && migration.deferrableWhenFull {
                outcome.deferred = migration
                break
            }
            outcome.applied.append(migration.version)
        }
        return outcome
    }
}
