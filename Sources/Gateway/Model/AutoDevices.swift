import Bluetooth
import Configuration
import Foundation

/// The zero-configuration devices (`auto_devices`): advertisers no configured match catches,
/// with a fixed address, that a built-in decoder recognises. Each is a passive device
/// `<decoder>_<last 3 address bytes>` (`bthome_cf0156`) decoding with that decoder. At most
/// `max_devices` (``DeviceBound``): a new one beyond that takes the place of the one seen least
/// recently only if that one has not been seen for `evict_after`; otherwise the new one is refused.
/// Pure; the gateway stores ``entries`` and applies ``expand(_:)``.
package struct AutoDevices: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        package var address: String
        package var decoder: String
        package var lastSeen: Date
        /// The advertised name when it was added, if known (for `auto_devices` name lists).
        package var name: String?

        package init(address: String, decoder: String, lastSeen: Date, name: String? = nil) {
            self.address = address
            self.decoder = decoder
            self.lastSeen = lastSeen
            self.name = name
        }
    }

    /// By id.
    package private(set) var entries: [String: Entry]
    /// Devices dropped because `max_devices` was reached, since start.
    package private(set) var evictions = 0
    /// Refusals of a new device because `max_devices` was reached and none was idle, since start:
    /// one per advertisement (a refused device is considered again with each), not per device.
    package private(set) var refusals = 0

    /// `loadedAt`: entries restored from the state database count as seen then at the latest
    /// (what was seen before the restart is unknown), so none is evicted before it had the time to
    /// advertise again.
    package init(entries: [String: Entry] = [:], loadedAt: Date? = nil) {
        self.entries = entries
        if let loadedAt {
            for id in entries.keys { self.entries[id]?.lastSeen = max(loadedAt, entries[id]?.lastSeen ?? loadedAt) }
        }
    }

    /// What ``add(_:decoder:at:bound:configuration:)`` did.
    package enum Admission: Sendable, Equatable {
        /// A new device with this id; these were dropped to make room.
        case added(String, evicted: [String])
        /// Already followed (seen again before the expanded configuration reached the scan).
        case known(String)
        /// Not added: the bound is reached and no device is idle enough to make room.
        case refused(String)
        /// Not added: the device at `address` (another address ending in the same 3 bytes) has this
        /// id already; the newcomer's readings would be published as that device's.
        case idTaken(String, address: String)
        /// Not added: `auto_devices.allow` or `deny` refuses it; the list that does (`"deny.decoders"`).
        case filtered(String, list: String)
    }

    /// `<decoder>_<last 3 address bytes, lowercase hex>`.
    package static func id(decoder: String, address: BluetoothAddress) -> String {
        decoder + "_" + Hex.string(address.bytes.suffix(3))
    }

    /// Adds the device at `address` recognised by `decoder` at `time`, advertising `name` (nil:
    /// not known yet), within `bound` and `auto_devices`' allow and deny lists. Nil when
    /// `configuration` already has a device with that id. A known device stored without a name
    /// (added before its name was heard, or restored from an older state) takes `name`, so the
    /// name lists judge it from then on (``expand(_:)``); the caller stores and applies that.
    package mutating func add(
        _ address: BluetoothAddress, decoder: String, name: String? = nil, at time: Date, bound: DeviceBound,
        configuration: BridgeConfiguration
    ) -> Admission? {
        let id = Self.id(decoder: decoder, address: address)
        guard configuration.device(id: id) == nil else { return nil }
        if let name, entries[id]?.address == address.string, entries[id]?.name == nil { entries[id]?.name = name }
        if let list = configuration.autoDevices.refusal(decoder: decoder, address: address, name: name) {
            return .filtered(id, list: list)
        }
        if let existing = entries[id] {
            guard existing.address == address.string else { return .idTaken(id, address: existing.address) }
            seen(id, at: time)
            return .known(id)
        }
        switch bound.decide(lastSeen: entries.mapValues(\.lastSeen), now: time) {
        case .refuse:
            refusals += 1
            return .refused(id)
        case .admit(let evicted):
            for gone in evicted { entries[gone] = nil }
            evictions += evicted.count
            entries[id] = Entry(address: address.string, decoder: decoder, lastSeen: time, name: name)
            return .added(id, evicted: evicted)
        }
    }

    /// An automatic device was adopted (``AdoptedDevices``): it is no longer followed here.
    package mutating func remove(_ id: String) {
        entries[id] = nil
    }

    /// An automatic device was seen again.
    package mutating func seen(_ id: String, at time: Date) {
        entries[id]?.lastSeen = time
    }

    /// The configuration with one passive device per entry appended: match on its address,
    /// advertisements decoded by its decoder (with its `auto_devices.bind_keys` key), named
    /// `<decoder> AABBCC`. Entries whose id or address a configured device already has, or that
    /// `auto_devices.allow` or `deny` (as they are now, after a reload) refuse, are left out.
    package func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        guard configuration.autoDevices.enabled else { return configuration }
        var expanded = configuration
        var ids = Set(configuration.devices.map(\.id))
        let pinned = Set(configuration.devices.compactMap { $0.match.address?.bytes })
        for (id, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard let address = BluetoothAddress(entry.address), !pinned.contains(address.bytes),
                configuration.autoDevices.refusal(decoder: entry.decoder, address: address, name: entry.name) == nil,
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
