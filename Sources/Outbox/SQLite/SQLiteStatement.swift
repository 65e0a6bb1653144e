internal import CSQLite

/// A prepared statement. Finalises itself when released; keeps its connection alive.
package final class SQLiteStatement {
    let handle: OpaquePointer
    let connection: SQLiteConnection
    package let sql: String
    /// The text and blobs of the current ``run(_:)``, bound where they are here.
    private var scratch: [UInt8] = []

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        try connection.check(result, sql: sql)
    }

    /// Binds parameters 1…n in order (`nil` binds NULL). Clears earlier bindings first.
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        try check(sqlite3_reset(handle))
        try check(sqlite3_clear_bindings(handle))
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one parameter (1-based index).
    package func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null:
            try check(sqlite3_bind_null(handle, index))
        case .integer(let number):
            try check(sqlite3_bind_int64(handle, index, number))
        case .real(let number):
            try check(sqlite3_bind_double(handle, index, number))
        case .text(let string):
            // The closure returns the result code rather than throwing: withUnsafeBufferPointer
            // only rethrows typed errors from Swift 6.1 on, and this must build with 6.0 too.
            // A native string's UTF-8 is read in place (SQLite copies it: transient); only a
            // bridged one is copied into an array first.
            // An empty buffer may have no address, which would bind NULL: "" is bound as a C string.
            let handle = handle
            let bindText = { (buffer: UnsafeBufferPointer<UInt8>) -> Int32 in
                guard let base = buffer.baseAddress, !buffer.isEmpty else {
                    return "".withCString { blebridge_sqlite3_bind_text_transient(handle, index, $0, 0) }
                }
                return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { text in
                    blebridge_sqlite3_bind_text_transient(handle, index, text, Int32(buffer.count))
                }
            }
            let result = string.utf8.withContiguousStorageIfAvailable(bindText)
            try check(result ?? Array(string.utf8).withUnsafeBufferPointer(bindText))
        case .blob(let bytes):
            // A zero-length blob with a nil pointer would bind NULL; use zeroblob instead.
            if bytes.isEmpty {
                try check(sqlite3_bind_zeroblob(handle, index, 0))
            } else {
                try check(
                    bytes.withUnsafeBufferPointer { buffer in
                        blebridge_sqlite3_bind_blob_transient(handle, index, buffer.baseAddress, Int32(buffer.count))
                    })
            }
        }
    }

    /// Advances: true when a row is available, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        if result == SQLITE_ROW { return true }
        if result == SQLITE_DONE { return false }
        defer { sqlite3_reset(handle) }  // after the funnel has read the message
        try check(result)
        return false
    }

    /// Binds `values`, runs to completion, and resets: for INSERT/UPDATE/DELETE.
    ///
    /// Text and blobs are copied into one buffer of the statement's, which keeps its capacity, and
    /// bound where they are there (`SQLITE_STATIC`) while the statement runs; the bindings are
    /// cleared before this returns. Bound as copies SQLite makes (`SQLITE_TRANSIENT`, as ``bind(_:)``
    /// does), each outbox row cost three allocations and frees in SQLite (issue 20).
    package func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try check(sqlite3_reset(handle))
        try check(sqlite3_clear_bindings(handle))
        scratch.removeAll(keepingCapacity: true)
        for value in values {
            switch value {
            case .text(var string): string.withUTF8 { scratch.append(contentsOf: $0) }
            case .blob(let bytes): scratch.append(contentsOf: bytes)
            case .null, .integer, .real: break
            }
        }
        let handle = handle
        // The closure returns a result code rather than throwing: withUnsafeBufferPointer only
        // rethrows typed errors from Swift 6.1 on, and this must build with 6.0 too.
        let result = scratch.withUnsafeBufferPointer { buffer -> Int32 in
            defer { sqlite3_clear_bindings(handle) }  // no pointer into the buffer outlives the call
            var offset = 0
            for (index, value) in values.enumerated() {
                let position = Int32(index + 1)
                let bound: Int32
                switch value {
                case .null: bound = sqlite3_bind_null(handle, position)
                case .integer(let number): bound = sqlite3_bind_int64(handle, position, number)
                case .real(let number): bound = sqlite3_bind_double(handle, position, number)
                case .text(let string):
                    // An empty text binds "", not NULL (the shim gives it an address).
                    let count = string.utf8.count
                    let start = UnsafeRawPointer(buffer.baseAddress.map { $0 + offset })?
                        .assumingMemoryBound(to: CChar.self)
                    bound = blebridge_sqlite3_bind_text_static(handle, position, start, Int32(count))
                    offset += count
                case .blob(let bytes):
                    // A zero-length blob with a nil pointer would bind NULL; use zeroblob instead.
                    if bytes.isEmpty {
                        bound = sqlite3_bind_zeroblob(handle, position, 0)
                    } else {
                        bound = blebridge_sqlite3_bind_blob_static(
                            handle, position, buffer.baseAddress! + offset, Int32(bytes.count))
                        offset += bytes.count
                    }
                }
                if bound != SQLITE_OK { return bound }
            }
            var stepped: Int32
            repeat { stepped = sqlite3_step(handle) } while stepped == SQLITE_ROW
            return stepped
        }
        defer { sqlite3_reset(handle) }  // after the funnel has read the message
        if result != SQLITE_DONE { try check(result) }
    }

    /// Resets so the statement can run again (bindings kept).
    package func reset() {
        sqlite3_reset(handle)
    }

    package func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    package func text(at column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    package func blob(at column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
