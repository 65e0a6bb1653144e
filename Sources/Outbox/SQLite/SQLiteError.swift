/// A failed SQLite call: the primary result code you can `catch` on, the extended code,
/// SQLite's message and, when known, the statement that failed.
package struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's primary result code (the low 8 bits of the extended code).
    package struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue & 0xFF }

        package static let error = ResultCode(rawValue: 1)
        package static let `internal` = ResultCode(rawValue: 2)
        package static let permission = ResultCode(rawValue: 3)
        package static let abort = ResultCode(rawValue: 4)
        package static let busy = ResultCode(rawValue: 5)
        package static let locked = ResultCode(rawValue: 6)
        package static let noMemory = ResultCode(rawValue: 7)
        package static let readOnly = ResultCode(rawValue: 8)
        package static let interrupt = ResultCode(rawValue: 9)
        package static let ioError = ResultCode(rawValue: 10)
        package static let corrupt = ResultCode(rawValue: 11)
        package static let notFound = ResultCode(rawValue: 12)
        package static let full = ResultCode(rawValue: 13)
        package static let cantOpen = ResultCode(rawValue: 14)
        package static let `protocol` = ResultCode(rawValue: 15)
        package static let schema = ResultCode(rawValue: 17)
        package static let tooBig = ResultCode(rawValue: 18)
        package static let constraint = ResultCode(rawValue: 19)
        package static let mismatch = ResultCode(rawValue: 20)
        package static let misuse = ResultCode(rawValue: 21)
        package static let range = ResultCode(rawValue: 25)
        package static let notADatabase = ResultCode(rawValue: 26)

        package var description: String {
            switch self {
            case .error: "SQLITE_ERROR"
            case .internal: "SQLITE_INTERNAL"
            case .permission: "SQLITE_PERM"
            case .abort: "SQLITE_ABORT"
            case .busy: "SQLITE_BUSY"
            case .locked: "SQLITE_LOCKED"
            case .noMemory: "SQLITE_NOMEM"
            case .readOnly: "SQLITE_READONLY"
            case .interrupt: "SQLITE_INTERRUPT"
            case .ioError: "SQLITE_IOERR"
            case .corrupt: "SQLITE_CORRUPT"
            case .notFound: "SQLITE_NOTFOUND"
            case .full: "SQLITE_FULL"
            case .cantOpen: "SQLITE_CANTOPEN"
            case .protocol: "SQLITE_PROTOCOL"
            case .schema: "SQLITE_SCHEMA"
            case .tooBig: "SQLITE_TOOBIG"
            case .constraint: "SQLITE_CONSTRAINT"
            case .mismatch: "SQLITE_MISMATCH"
            case .misuse: "SQLITE_MISUSE"
            case .range: "SQLITE_RANGE"
            case .notADatabase: "SQLITE_NOTADB"
            default: "SQLITE_\(rawValue)"
            }
        }
    }

    /// The primary result code.
    package var code: ResultCode
    /// The extended result code (e.g. `SQLITE_IOERR_FSYNC`), when SQLite reported one.
    package var extendedCode: Int32
    /// SQLite's own explanation (`sqlite3_errmsg` or `sqlite3_errstr`).
    package var message: String
    /// The SQL that failed, when the failure belongs to a statement.
    package var sql: String?

    package init(code: ResultCode, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code.rawValue
        self.message = message
        self.sql = sql
    }

    package var description: String {
        var text = "\(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}
