import Bluetooth

/// One client's `SetDiscoveryFilter` (adapter-api.txt): which devices it wants reported, and how.
public struct DiscoveryFilter: Sendable, Equatable {
    public enum Transport: String, Sendable, Equatable, CaseIterable { case auto, bredr, le }

    public var uuids: [BluetoothUUID] = []
    public var rssi: Int16?
    public var pathloss: UInt16?
    public var transport: Transport = .auto
    public var duplicateData = true
    public var discoverable = false
    public var pattern: String?

    public init() {}

    /// The keys `GetDiscoveryFilters` returns, in bluetoothd's order.
    public static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// Whether a device with these advertised properties passes this filter.
    public func matches(uuids advertised: [BluetoothUUID], rssi: Int16, txPower: Int16?, name: String?, address: String)
        -> Bool
    {
        if !uuids.isEmpty, !uuids.contains(where: advertised.contains) { return false }
        if let threshold = self.rssi, rssi < threshold { return false }
        if let pathloss, let txPower, Int(txPower) - Int(rssi) > Int(pathloss) { return false }
        if let pattern, !pattern.isEmpty, !address.hasPrefix(pattern), !(name?.hasPrefix(pattern) ?? false) {
            return false
        }
        return true
    }
}
