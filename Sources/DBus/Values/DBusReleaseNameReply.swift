/// The bus daemon's answer to `ReleaseName`.
package enum DBusReleaseNameReply: UInt32, Sendable {
    case released = 1
    case nonExistent = 2
    case notOwner = 3
}
