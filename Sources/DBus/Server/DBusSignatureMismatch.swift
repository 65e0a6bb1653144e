/// How an exported object answers a method call whose argument signature differs from the
/// method's declared one.
package enum DBusSignatureMismatch: Sendable, Hashable {
    /// `org.freedesktop.DBus.Error.InvalidArgs` naming the expected and the received signature
    /// (the default).
    case invalidArgs
    /// `org.freedesktop.DBus.Error.UnknownMethod` with libdbus's text, `Method "ReadValue" with
    /// signature "s" on interface "org.bluez.GattCharacteristic1" doesn't exist` and a newline:
    /// what BlueZ's gdbus (bluetoothd) answers, because it matches methods by name and
    /// signature together.
    case unknownMethod
}
