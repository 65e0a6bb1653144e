/// The operation an error happened in; the same BlueZ error means different things in different operations
/// (`NotPermitted` on a read is `readNotPermitted`, on a write `writeNotPermitted`; a D-Bus timeout on
/// `Connect` is a `connectionTimeout`).
package enum BluetoothOperation: String, Sendable, Hashable, CaseIterable {
    case connect, disconnect, discovery, read, write, notify, pair, other
}
