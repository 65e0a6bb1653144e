internal import CDBus

/// The one funnel from libdbus's `DBusError` out-parameter to this module's `DBusError`.
enum LibDBusError {
    /// Runs `body` with an initialised libdbus error; when `body` returns nil, throws the error
    /// libdbus set (or a generic failure naming `operation`).
    static func check<T>(_ operation: String, _ body: (UnsafeMutablePointer<CDBus.DBusError>) -> T?)
        throws(DBusError) -> T
    {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        if let value = body(&error), dbus_error_is_set(&error) == 0 { return value }
        if dbus_error_is_set(&error) != 0 {
            let name = error.name.map { String(cString: $0) } ?? DBusErrorName.failed.rawValue
            let message = error.message.map { String(cString: $0) } ?? operation
            throw DBusError(name: DBusErrorName(name), message: message)
        }
        throw DBusError(.failed, "\(operation) failed")
    }
}
