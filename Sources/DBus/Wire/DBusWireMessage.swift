internal import CDBus

/// A whole D-Bus message in wire format (header and body, either byte order), as it arrives on
/// a bus socket.
///
/// Every message a connection receives goes through libdbus's validation and then
/// `MessageDecoder`; this is the same path for bytes that did not come from a socket, so the
/// decoder can be checked on any input (the `fuzz-dbus-message` harness in `Fuzz/`).
public enum DBusWireMessage {
    /// The largest message libdbus accepts (its default `max_message_size`, 128 MiB).
    package static let maximumBytes = 128 * 1024 * 1024

    /// Validates the message as libdbus does on receipt and decodes its arguments. Throws
    /// libdbus's error (`org.freedesktop.DBus.Error.InvalidArgs` and others) for bytes that are
    /// not a valid message, and this module's errors for values it cannot represent.
    public static func arguments(of bytes: [UInt8]) throws(DBusError) -> [DBusValue] {
        guard bytes.count <= maximumBytes else {
            throw DBusError(.limitsExceeded, "a message of \(bytes.count) bytes; the limit is \(maximumBytes)")
        }
        let storage = bytes.isEmpty ? [0] : bytes
        let raw = try LibDBusError.check("dbus_message_demarshal") { error in
            storage.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    dbus_message_demarshal(chars.baseAddress, Int32(bytes.count), error)
                }
            }
        }
        return try Message(adopting: raw).arguments()
    }
}
