import Bluetooth

/// What one scanner wants to see; several are merged into the one filter BlueZ gets
/// (`Adapter1.SetDiscoveryFilter`, always with `Transport` `le`).
public struct DiscoveryFilter: Sendable, Hashable {
    /// Only devices advertising one of these services (as service UUID or service data); empty for all.
    public var services: Set<BluetoothUUID>
    /// Only devices at least this strong (dBm); nil for all.
    public var rssiThreshold: Int?
    /// Report every advertisement, not only changes (BlueZ `DuplicateData`).
    public var allowDuplicates: Bool

    public init(services: Set<BluetoothUUID> = [], rssiThreshold: Int? = nil, allowDuplicates: Bool = false) {
        self.services = services
        self.rssiThreshold = rssiThreshold
        self.allowDuplicates = allowDuplicates
    }

    /// The loosest filter that lets through everything each of `filters` wants: services united (empty if any
    /// wants all), the lowest RSSI threshold (none if any has none), duplicates if any wants them. Each scanner
    /// then filters the merged stream for itself.
    public static func merged(_ filters: some Collection<DiscoveryFilter>) -> DiscoveryFilter {
        guard let first = filters.first else { return DiscoveryFilter() }
        var merged = first
        for filter in filters.dropFirst() {
            merged.services =
                merged.services.isEmpty || filter.services.isEmpty ? [] : merged.services.union(filter.services)
            merged.rssiThreshold = merged.rssiThreshold.flatMap { lhs in filter.rssiThreshold.map { min(lhs, $0) } }
            merged.allowDuplicates = merged.allowDuplicates || filter.allowDuplicates
        }
        return merged
    }

    /// True when a device with this advertisement and RSSI passes the filter.
    public func admits(_ advertisement: AdvertisementData, rssi: Int?) -> Bool {
        if let rssiThreshold, let rssi, rssi < rssiThreshold { return false }
        return advertisement.advertisesAny(of: services)
    }
}
