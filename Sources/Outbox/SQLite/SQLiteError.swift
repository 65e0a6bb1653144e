/// A failed SQLite call: the primary result code you can `catch` on, the extended code,
/// SQLite's message and, when known, the statement that failed.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's primary result code (the low 8 bits of the extended code).
    public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue & 0xFF }

        public static let error = ResultCode(rawValue: 1)
        public static let `internal` = ResultCode(rawValue: 2)
        public static let permission = ResultCode(rawValue: 3)
        public static let abort = ResultCode(rawValue: 4)
        public static let busy = ResultCode(rawValue: 5)
        public static let locked = ResultCode(rawValue: 6)
        public static let noMemory = ResultCode(rawValue: 7)
        public static let readOnly = ResultCode(rawValue: 8)
        public static let interrupt = ResultCode(rawValue: 9)
        public static let ioError = ResultCode(rawValue: 10)
        public static let corrupt = ResultCode(rawValue: 11)
        public static let notFound = ResultCode(rawValue: 12)
        public static let full = ResultCode(rawValue: 13)
        public static let cantOpen = ResultCode(rawValue: 14)
        public static let `protocol` = ResultCode(rawValue: 15)
        public static let schema = ResultCode(rawValue: 17)
        public static let tooBig = ResultCode(rawValue: 18)
        public static let constraint = ResultCode(rawValue: 19)
        public static let mismatch = ResultCode(rawValue: 20)
        public static let misuse = ResultCode(rawValue: 21)
        public static let range = ResultCode(rawValue: 25)
        public static let notADatabase = ResultCode(rawValue: 26)

        public var description: String {
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
    public var code: ResultCode
    /// The extended result code (e.g. `SQLITE_IOERR_FSYNC`), when SQLite reported one.
    public var extendedCode: Int32
    /// SQLite's own explanation (`sqlite3_errmsg` or `sqlite3_errstr`).
    public var message: String
    /// The SQL that failed, when the failure belongs to a statement.
    public var sql: String?

    public init(code: ResultCode, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code.rawValue
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}
