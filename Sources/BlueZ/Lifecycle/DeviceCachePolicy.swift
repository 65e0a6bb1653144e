import Bluetooth

/// Keeps BlueZ's device cache bounded: BlueZ remembers every device it ever saw, and with thousands of
/// random-address devices passing by, `GetManagedObjects` replies and CPU grow without bound (bleak#500).
/// This pure policy decides which devices to `RemoveDevice`: never connected, connecting, paired, trusted or
/// retained ones (those the application holds); the others when not seen for `timeToLive`, and beyond
/// `maximumDevices` the longest unseen first, random addresses before public ones.
public struct DeviceCachePolicy: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        public var address: BluetoothAddress
        public var lastSeen: ContinuousClock.Instant
        /// Connected, connecting, paired, trusted, or held by the application.
        public var isProtected: Bool

        public init(address: BluetoothAddress, lastSeen: ContinuousClock.Instant, isProtected: Bool) {
            self.address = address
            self.lastSeen = lastSeen
            self.isProtected = isProtected
        }
    }

    public var timeToLive: Duration
    public var maximumDevices: Int

    public init(timeToLive: Duration = .seconds(300), maximumDevices: Int = 512) {
        self.timeToLive = timeToLive
        self.maximumDevices = max(1, maximumDevices)
    }

    /// The addresses to remove, given every device BlueZ holds.
    public func devicesToRemove(_ entries: [Entry], now: ContinuousClock.Instant) -> [BluetoothAddress] {
        var removals: [BluetoothAddress] = []
        var kept: [Entry] = []
        for entry in entries {
            if !entry.isProtected && now - entry.lastSeen > timeToLive {
                removals.append(entry.address)
            } else {
                kept.append(entry)
            }
        }
        let excess = kept.count - maximumDevices
        if excess > 0 {
            let candidates = kept.filter { !$0.isProtected }.sorted { lhs, rhs in
                let lhsRandom = lhs.address.type == .random
                let rhsRandom = rhs.address.type == .random
                if lhsRandom != rhsRandom { return lhsRandom }
                return lhs.lastSeen < rhs.lastSeen
            }
            removals += candidates.prefix(excess).map(\.address)
        }
        return removals
    }
}
