/// The outbox's schema history. `PRAGMA user_version` records how far a file has been
/// migrated; opening applies the missing steps in order, each in its own transaction, so a
/// failed step leaves the file at the previous version.
enum OutboxSchema {
    struct Migration: Sendable {
        let version: Int
        let summary: String
        let sql: String
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
    ]

    static var currentVersion: Int { migrations.last?.version ?? 0 }

    /// Brings `connection` from its `user_version` up to `target` (the latest by default).
    /// Returns the versions applied.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, upTo target: Int = currentVersion) throws -> [Int] {
        let found = try connection.userVersion()
        if found > currentVersion {
            throw OutboxError(
                .schemaTooNew,
                "\(connection.path) has schema version \(found); this build knows up to \(currentVersion)")
        }
        var applied: [Int] = []
        for migration in migrations where migration.version > found && migration.version <= target {
            try connection.transaction {
                try connection.execute(migration.sql)
                try connection.setUserVersion(migration.version)
            }
            applied.append(migration.version)
        }
        return applied
    }
}
