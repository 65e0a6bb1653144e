internal import CDBus

/// An owned reference to a libdbus message; unreferenced on deinit.
///
/// `@unchecked Sendable` is sound because: libdbus message reference counts are atomic once
/// `dbus_threads_init_default()` ran (every connection calls it first), and a `Message` is only
/// mutated (arguments appended) by the one task that created it, before it is handed to the
/// connection thread; after that, every user only reads it.
final class Message: @unchecked Sendable {
    let raw: OpaquePointer

    /// Adopts a reference the caller owns.
    init(adopting raw: OpaquePointer) {
        self.raw = raw
    }

    /// Takes an additional reference.
    init(retaining raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }

    static func methodCall(destination: String?, path: DBusObjectPath, interface: String?, method: String)
        throws(DBusError) -> Message
    {
        try WireNames.validateMember(method)
        if let interface { try WireNames.validateInterface(interface) }
        if let destination { try WireNames.validateBusName(destination) }
        guard let raw = dbus_message_new_method_call(destination, path.rawValue, interface, method) else {
            throw DBusError(.noMemory, "cannot allocate a method call")
        }
        return Message(adopting: raw)
    }

    static func signal(path: DBusObjectPath, interface: String, name: String) throws(DBusError) -> Message {
        try WireNames.validateInterface(interface)
        try WireNames.validateMember(name)
        guard let raw = dbus_message_new_signal(path.rawValue, interface, name) else {
            throw DBusError(.noMemory, "cannot allocate a signal")
        }
        return Message(adopting: raw)
    }

    func methodReturn() throws(DBusError) -> Message {
        guard let raw = dbus_message_new_method_return(raw) else {
            throw DBusError(.noMemory, "cannot allocate a method return")
        }
        return Message(adopting: raw)
    }

    func errorReply(_ error: DBusError) -> Message? {
        let name = WireNames.isValidErrorName(error.name.rawValue) ? error.name.rawValue : DBusErrorName.failed.rawValue
        let text = error.message.utf8.contains(0) ? String(error.message.prefix { $0 != "\0" }) : error.message
        guard let reply = dbus_message_new_error(raw, name, text) else { return nil }
        return Message(adopting: reply)
    }

    func setNoReply() { dbus_message_set_no_reply(raw, 1) }

    func setDestination(_ destination: String) throws(DBusError) {
        try WireNames.validateBusName(destination)
        guard dbus_message_set_destination(raw, destination) != 0 else {
            throw DBusError(.noMemory, "cannot set the destination")
        }
    }

    var type: Int32 { dbus_message_get_type(raw) }
    var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }
    var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    /// The number its sender gave the message (a connection numbers its messages as it sends them).
    var serial: UInt32 { dbus_message_get_serial(raw) }
    var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }

    /// Appends `values` as the message's arguments.
    func append(_ values: [DBusValue]) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in values {
            try MessageEncoder.append(value, to: &iter)
        }
    }

    /// Decodes all arguments.
    func arguments() throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        return try MessageDecoder.decodeAll(&iter)
    }

    /// The error a reply carries, when it is an error reply.
    func replyError() -> DBusError? {
        guard type == DBUS_MESSAGE_TYPE_ERROR else { return nil }
        let name = errorName ?? DBusErrorName.failed.rawValue
        var text = ""
        var iter = DBusMessageIter()
        if dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == TypeCode.string {
            var pointer: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iter, &pointer)
            if let pointer { text = String(cString: pointer) }
        }
        return DBusError(name: DBusErrorName(name), message: text)
    }
}
