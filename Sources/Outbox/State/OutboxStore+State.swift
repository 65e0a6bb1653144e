import Foundation

/// A small key-value table in the outbox database for state that must survive restarts with
/// the queue (the gateway's known peripherals, subscriptions, announced discovery topics).
///
/// Runs on the store's own thread like every other store call. The table (`kv_state`) comes
/// from schema migration 4 (files that created it on first use before that keep theirs).
extension OutboxStore {
    /// The value stored under `key`, if any.
    package func stateValue(forKey key: String) throws(OutboxError) -> [UInt8]? {
        try withStateTable { connection in
            let statement = try connection.prepare("SELECT value FROM kv_state WHERE key = ?")
            try statement.bind([.text(key)])
            guard try statement.step() else { return nil }
            return statement.blob(at: 0)
        }
    }

    /// Every key starting with `prefix` and its value, ordered by key.
    package func stateValues(prefix: String) throws(OutboxError) -> [(key: String, value: [UInt8])] {
        try withStateTable { connection in
            let statement = try connection.prepare(
                "SELECT key, value FROM kv_state WHERE substr(key, 1, ?) = ? ORDER BY key")
            // SQLite's substr counts code points, not Swift characters.
            try statement.bind([.integer(Int64(prefix.unicodeScalars.count)), .text(prefix)])
            var rows: [(key: String, value: [UInt8])] = []
            while try statement.step() {
                rows.append((statement.text(at: 0), statement.blob(at: 1)))
            }
            return rows
        }
    }

    /// Stores `value` under `key` (replacing what was there), with the time of the change.
    package func setStateValue(_ value: [UInt8], forKey key: String) throws(OutboxError) {
        try withStateTable { connection in
            try connection.prepare(
                "INSERT INTO kv_state (key, value, updated) VALUES (?, ?, ?) "
                    + "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated = excluded.updated"
            ).run([.text(key), .blob(value), .real(clock.date.timeIntervalSince1970)])
        }
    }

    /// Removes `key`; nothing happens when it is absent.
    package func removeStateValue(forKey key: String) throws(OutboxError) {
        try withStateTable { connection in
            try connection.prepare("DELETE FROM kv_state WHERE key = ?").run([.text(key)])
        }
    }

    private func withStateTable<T>(_ body: (SQLiteConnection) throws -> T) throws(OutboxError) -> T {
        try withConnection(body)
    }
}
