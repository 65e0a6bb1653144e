internal import CDBus

/// Validation of names before they reach libdbus (which aborts the process on invalid input).
enum WireNames {
    static func validateInterface(_ name: String) throws(DBusError) {
        guard dbus_validate_interface(name, nil) != 0 else {
            throw DBusError(.invalidArgs, "invalid interface name '\(name)'")
        }
    }

    static func validateMember(_ name: String) throws(DBusError) {
        guard dbus_validate_member(name, nil) != 0 else {
            throw DBusError(.invalidArgs, "invalid member name '\(name)'")
        }
    }

    static func validateBusName(_ name: String) throws(DBusError) {
        guard dbus_validate_bus_name(name, nil) != 0 else {
            throw DBusError(.invalidArgs, "invalid bus name '\(name)'")
        }
    }

    static func isValidErrorName(_ name: String) -> Bool {
        dbus_validate_error_name(name, nil) != 0
    }
}
