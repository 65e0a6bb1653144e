public import Bluetooth
public import Configuration
public import Foundation

/// The zero-configuration devices (`auto_devices`): advertisers no configured match catches,
/// with a fixed address, that a built-in decoder recognises. Each is a passive device
/// `<decoder>_<last 3 address bytes>` (`bthome_cf0156`) decoding with that decoder. At most
/// `max_devices`; a new one beyond that evicts the one seen least recently. Pure; the gateway
/// stores ``entries`` and applies ``expand(_:)``.
public struct AutoDevices: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var address: String
        public var decoder: String
        public var lastSeen: Date

        public init(address: String, decoder: String, lastSeen: Date) {
            self.address = address
            self.decoder = decoder
            self.lastSeen = lastSeen
        }
    }

    /// By id.
    public private(set) var entries: [String: Entry]
    /// Devices dropped because `max_devices` was reached, since start.
    public private(set) var evictions = 0

    public init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// `<decoder>_<last 3 address bytes, lowercase hex>`.
    public static func id(decoder: String, address: BluetoothAddress) -> String {
        decoder + "_" + Hex.string(address.bytes.suffix(3))
    }

    /// Adds the device at `address` recognised by `decoder`; returns its id and the ids evicted to
    /// stay within `maximum`. Nil when `configuration` already has a device with that id.
    public mutating func add(
        _ address: BluetoothAddress, decoder: String, at time: Date, maximum: Int, configuration: BridgeConfiguration
    ) -> (id: String, evicted: [String])? {
        let id = Self.id(decoder: decoder, address: address)
        guard configuration.device(id: id) == nil else { return nil }
        entries[id] = Entry(address: address.string, decoder: decoder, lastSeen: time)
        var evicted: [String] = []
        while entries.count > max(1, maximum) {
            guard let oldest = entries.filter({ $0.key != id }).min(by: { $0.value.lastSeen < $1.value.lastSeen })
            else { break }
            entries[oldest.key] = nil
            evicted.append(oldest.key)
            evictions += 1
        }
        return (id, evicted)
    }

    /// An automatic device was seen again.
    public mutating func seen(_ id: String, at time: Date) {
        entries[id]?.lastSeen = time
    }

    /// The configuration with one passive device per entry appended: match on its address,
    /// advertisements decoded by its decoder (with its `auto_devices.bind_keys` key), named
    /// `<decoder> AABBCC`. Entries whose id or
    /// address a configured device already has are left out.
    public func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        guard configuration.autoDevices.enabled else { return configuration }
        var expanded = configuration
        var ids = Set(configuration.devices.map(\.id))
        let pinned = Set(configuration.devices.compactMap { $0.match.address?.bytes })
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let address = BluetoothAddress(entry.address), !pinned.contains(address.bytes),
                ids.insert(id).inserted
            else { continue }
            expanded.devices.append(
                DeviceConfiguration(
                    id: id, name: entry.decoder + " " + Hex.string(address.bytes.suffix(3)).uppercased(),
                    match: DeviceMatch(address: address), connection: .passive,
                    advertisement: AdvertisementSettings(
                        decoder: entry.decoder, bindKey: configuration.autoDevices.bindKey(for: address))))
        }
        return expanded
    }
}
