/// The bus daemon's answer to `RequestName`.
package enum DBusRequestNameReply: UInt32, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}
