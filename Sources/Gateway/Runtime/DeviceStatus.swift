import Foundation

/// What the gateway knows about one configured device right now (for `bridge/devices` and
/// availability).
struct DeviceStatus: Sendable, Hashable {
    var address: String?
    var connected = false
    var rssi: Int?
    var lastSeen: Date?
    var services: [String] = []
    /// The last availability published (`online`/`offline`), to publish only changes.
    var availability: String?
}
