import Bluetooth
import Configuration
import Foundation

/// The devices a match without an address has caught, so that each gets its own id instead of
/// all of them merging into one state.
///
/// The first device with a fixed address (public or static random) that such a match catches is
/// the configured device itself, under its configured id. Every further one becomes a device of
/// its own, `<id>_<last 3 address bytes>` (`one_cf0156`), with the configured device's settings
/// and its address pinned. The assignment is kept in the gateway's state, so the same sensor keeps
/// the same id after a restart. Private addresses (resolvable or not) change every few minutes, so
/// they are never split off: they stay with the configured device as before.
///
/// Each configured device has at most ``bound``'s 100 instances (``DeviceBound``, as automatic
/// devices): a new one beyond that takes the place of the one seen least recently if that one has
/// not been seen for 10 minutes, and is refused otherwise (its advertisements are dropped, not
/// merged into the configured device). Pure; the gateway stores ``bindings`` and applies
/// ``expand(_:)``.
package struct MatchInstances: Sendable, Equatable {
    /// Per configured device (whose match has no address): the fixed addresses it caught, in the
    /// order they were first seen; the first is the configured device itself.
    package private(set) var bindings: [String: [String]]
    /// When each instance (by id) was last seen; not persisted (see ``init(bindings:loadedAt:)``).
    package private(set) var lastSeen: [String: Date] = [:]
    /// Instances dropped to make room, and refusals of new ones (one per advertisement), since start.
    package private(set) var evictions = 0
    package private(set) var refusals = 0

    /// Instances followed now (the configured devices themselves not counted).
    package var count: Int { bindings.values.reduce(0) { $0 + max(0, $1.count - 1) } }

    /// The most instances per configured device, and how long one must be unseen to make room.
    package static let bound = DeviceBound(maximum: 100)

    /// `loadedAt`: restored instances count as seen then (so none is evicted before it had the
    /// time to advertise again); without it, as never seen.
    package init(bindings: [String: [String]] = [:], loadedAt: Date? = nil) {
        self.bindings = bindings
        guard let loadedAt else { return }
        for (template, addresses) in bindings {
            for text in addresses.dropFirst() {
                guard let address = BluetoothAddress(text) else { continue }
                lastSeen[Self.instanceID(template, address: address)] = loadedAt
            }
        }
    }

    /// What an advertiser caught by `template`'s match is.
    package enum Assignment: Sendable, Equatable {
        /// The configured device itself (its first fixed address, or a private address).
        case template
        /// An instance already known under this id.
        case instance(String)
        /// A new instance with this id, after the instances `evicted` were dropped to make room:
        /// store ``bindings`` and apply ``expand(_:)``.
        case newInstance(String, evicted: [String])
        /// A new fixed address beyond ``bound`` with no instance idle enough to make room: its
        /// advertisements are dropped (this id is what it would have had).
        case refused(String)
        /// The configured device's first fixed address, seen for the first time: store ``bindings``.
        case newTemplateBinding
        /// A new fixed address whose instance id an instance at `address` (ending in the same 3
        /// bytes) has already: its advertisements are dropped, not published as that instance's.
        case idTaken(String, address: String)
    }

    /// Whether the address stays the same over time (public, or random static).
    package static func isFixed(_ address: BluetoothAddress) -> Bool {
        address.type == .public || address.randomSubtype == .staticAddress
    }

    /// `<id>_<last 3 address bytes, lowercase hex>`.
    package static func instanceID(_ templateID: String, address: BluetoothAddress) -> String {
        templateID + "_" + Hex.string(address.bytes.suffix(3))
    }

    /// Assigns an advertiser at `address` caught by the match of `template` (a device whose match
    /// has no address), seen at `time`, keeping to `bound` instances per configured device.
    package mutating func assign(
        _ address: BluetoothAddress, caughtBy template: DeviceConfiguration, at time: Date,
        bound: DeviceBound = Self.bound
    ) -> Assignment {
        guard template.match.address == nil, Self.isFixed(address) else { return .template }
        var addresses = bindings[template.id] ?? []
        let id = Self.instanceID(template.id, address: address)
        if let index = addresses.firstIndex(of: address.string) {
            guard index > 0 else { return .template }
            lastSeen[id] = time
            return .instance(id)
        }
        guard !addresses.isEmpty else {
            bindings[template.id] = [address.string]
            return .newTemplateBinding
        }
        var instances: [String: String] = [:]
        for text in addresses.dropFirst() {
            guard let known = BluetoothAddress(text) else { continue }
            instances[Self.instanceID(template.id, address: known)] = text
        }
        if let other = instances[id] { return .idTaken(id, address: other) }
        let seen = Dictionary(uniqueKeysWithValues: instances.keys.map { ($0, lastSeen[$0] ?? .distantPast) })
        switch bound.decide(lastSeen: seen, now: time) {
        case .refuse:
            refusals += 1
            return .refused(id)
        case .admit(let evicted):
            let gone = Set(evicted.compactMap { instances[$0] })
            addresses.removeAll { gone.contains($0) }
            for old in evicted { lastSeen[old] = nil }
            evictions += evicted.count
            addresses.append(address.string)
            bindings[template.id] = addresses
            lastSeen[id] = time
            return .newInstance(id, evicted: evicted)
        }
    }

    /// An instance was seen again (other ids are ignored).
    package mutating func seen(_ id: String, at time: Date) {
        guard lastSeen[id] != nil else { return }
        lastSeen[id] = time
    }

    /// The configuration with one device per instance, appended after the configured ones: a copy
    /// of its configured device with the id `<id>_<aabbcc>`, the name `<name> AABBCC` and a match
    /// on the address alone (the name may be missing from later advertisements). Instances of devices no longer configured (or that now match an address)
    /// are left out, as is an instance whose id a configured device already uses.
    package func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
        var expanded = configuration
        var ids = Set(configuration.devices.map(\.id))
        for template in configuration.devices where template.match.address == nil {
            for text in (bindings[template.id] ?? []).dropFirst() {
                guard let address = BluetoothAddress(text) else { continue }
                let id = Self.instanceID(template.id, address: address)
                guard ids.insert(id).inserted else { continue }
                var instance = template
                instance.id = id
                instance.name = template.name + " " + Hex.string(address.bytes.suffix(3)).uppercased()
                instance.match = DeviceMatch(address: address)
                expanded.devices.append(instance)
            }
        }
        return expanded
    }
}
