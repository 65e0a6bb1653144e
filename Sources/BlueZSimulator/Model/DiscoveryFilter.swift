import Bluetooth

/// One client's `SetDiscoveryFilter` (adapter-api.txt): which devices it wants reported, and how.
package struct DiscoveryFilter: Sendable, Equatable {
    package enum Transport: String, Sendable, Equatable, CaseIterable { case auto, bredr, le }

    package var uuids: [BluetoothUUID] = []
    package var rssi: Int16?
    package var pathloss: UInt16?
    package var transport: Transport = .auto
    package var duplicateData = true
    package var discoverable = false
    package var pattern: String?

    package init() {}

    /// The keys `GetDiscoveryFilters` returns, in bluetoothd's order.
    package static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// Whether a device with these advertised properties passes this filter.
    package func matches(
        uuids advertised: [BluetoothUUID], rssi: Int16, txPower: Int16?, name: String?, address: String
    )
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
