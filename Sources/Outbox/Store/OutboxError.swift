/// A failure of the outbox store, with a code to `catch` on and the SQLite error behind it.
package struct OutboxError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Code: String, Sendable, Hashable {
        /// The disk (or the database's page limit) is full: nothing more can be stored.
        case diskFull
        /// The database file or its directory cannot be written.
        case readOnly
        /// Another process holds a lock on the database longer than the busy timeout.
        case locked
        /// The file is corrupt and could not be repaired.
        case corrupt
        /// The file was written by a newer version of BLEBridge (schema version too high).
        case schemaTooNew
        /// One entry alone is larger than the byte cap.
        case entryTooLarge
        /// The file cannot be opened (missing directory, permissions, …).
        case cannotOpen
        /// The store was closed.
        case closed
        /// Any other SQLite failure (see `underlying`).
        case database
    }

    package var code: Code
    package var message: String
    package var underlying: SQLiteError?

    package init(_ code: Code, _ message: String, underlying: SQLiteError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Classifies an SQLite failure.
    package init(_ error: SQLiteError) {
        let code: Code =
            switch error.code {
            case .full: .diskFull
            case .readOnly: .readOnly
            case .busy, .locked: .locked
            case .corrupt, .notADatabase: .corrupt
            case .cantOpen, .permission: .cannotOpen
            default: .database
            }
        self.init(code, error.description, underlying: error)
    }

    /// Any error from the store's internals as an `OutboxError`.
    static func classifying(_ error: any Error, path: String) -> OutboxError {
        switch error {
        case let error as OutboxError: error
        case let error as SQLiteError: OutboxError(error)
        default: OutboxError(.database, "\(path): \(error)")
        }
    }

    package var description: String { "outbox \(code.rawValue): \(message)" }
}
