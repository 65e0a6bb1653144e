public import Bluetooth
public import Configuration

/// The devices a match without an address has caught, so that each gets its own id instead of
/// all of them merging into one state.
///
/// The first device with a fixed address (public or static random) that such a match catches is
/// the configured device itself, under its configured id. Every further one becomes a device of
/// its own, `<id>_<last 3 address bytes>` (`one_cf0156`), with the configured device's settings
/// and its address pinned. The assignment is kept in the gateway's state, so the same sensor keeps
/// the same id after a restart. Private addresses (resolvable or not) change every few minutes, so
/// they are never split off: they stay with the configured device as before. Pure; the gateway
/// stores ``bindings`` and applies ``expand(_:)``.
public struct MatchInstances: Sendable, Equatable {
    /// Per configured device (whose match has no address): the fixed addresses it caught, in the
    /// order they were first seen; the first is the configured device itself.
    public private(set) var bindings: [String: [String]]

    public init(bindings: [String: [String]] = [:]) {
        self.bindings = bindings
    }

    /// What an advertiser caught by `template`'s match is.
    public enum Assignment: Sendable, Equatable {
        /// The configured device itself (its first fixed address, or a private address).
        case template
        /// An instance already known under this id.
        case instance(String)
        /// A new instance with this id: store ``bindings`` and apply ``expand(_:)``.
        case newInstance(String)
        /// The configured device's first fixed address, seen for the first time: store ``bindings``.
        case newTemplateBinding
    }

    /// Whether the address stays the same over time (public, or random static).
    public static func isFixed(_ address: BluetoothAddress) -> Bool {
        address.type == .public || address.randomSubtype == .staticAddress
    }

    /// `<id>_<last 3 address bytes, lowercase hex>`.
    public static func instanceID(_ templateID: String, address: BluetoothAddress) -> String {
        templateID + "_" + Hex.string(address.bytes.suffix(3))
    }

    /// Assigns an advertiser at `address` caught by the match of `template` (a device whose match
    /// has no address).
    public mutating func assign(_ address: BluetoothAddress, caughtBy template: DeviceConfiguration) -> Assignment {
        guard template.match.address == nil, Self.isFixed(address) else { return .template }
        var addresses = bindings[template.id] ?? []
        if let index = addresses.firstIndex(of: address.string) {
            return index == 0 ? .template : .instance(Self.instanceID(template.id, address: address))
        }
        addresses.append(address.string)
        bindings[template.id] = addresses
        return addresses.count == 1 ? .newTemplateBinding : .newInstance(Self.instanceID(template.id, address: address))
    }

    /// The configuration with one device per instance, appended after the configured ones: a copy
    /// of its configured device with the id `<id>_<aabbcc>`, the name `<name> AABBCC` and a match
    /// on the address alone (the name may be missing from later advertisements). Instances of devices no longer configured (or that now match an address)
    /// are left out, as is an instance whose id a configured device already uses.
    public func expand(_ configuration: BridgeConfiguration) -> BridgeConfiguration {
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
