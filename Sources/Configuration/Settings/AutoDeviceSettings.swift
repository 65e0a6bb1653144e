import Bluetooth

/// `auto_devices`: zero-configuration devices. When enabled, an advertiser that no `devices[]`
/// entry matches, whose address is fixed (public or random static) and whose advertisement a
/// built-in decoder recognises, is published as a passive device `<decoder>_<last 3 address
/// bytes>` with Home Assistant discovery, without a configuration entry.
package struct AutoDeviceSettings: Sendable, Equatable {
    package var enabled: Bool
    /// The most automatic devices followed at once; beyond it a new one takes the place of the one
    /// seen least recently if that one has not been seen for ``evictAfter`` (counted and logged),
    /// and is refused otherwise (counted, logged at most once a minute).
    package var maxDevices: Int
    /// How long an automatic device must have gone unseen before a new one may take its place.
    package var evictAfter: Duration
    /// Bind keys (16 bytes) of encrypted advertisers by address (`AA:BB:CC:DD:EE:FF`, uppercase),
    /// so that an encrypted sensor (stock Xiaomi MiBeacon v4/v5, BTHome, ATC/pvvx) is recognised
    /// and decoded without a `devices[]` entry.
    package var bindKeys: [String: [UInt8]]
    /// Only advertisers every non-empty list of which has an entry that catches them become
    /// automatic devices (empty: all).
    package var allow: AutoDeviceFilter
    /// Advertisers an entry of any list catches never become automatic devices (wins over ``allow``).
    package var deny: AutoDeviceFilter

    package init(
        enabled: Bool = false, maxDevices: Int = 100, evictAfter: Duration = .seconds(600),
        bindKeys: [String: [UInt8]] = [:], allow: AutoDeviceFilter = AutoDeviceFilter(),
        deny: AutoDeviceFilter = AutoDeviceFilter()
    ) {
        self.enabled = enabled
        self.maxDevices = maxDevices
        self.evictAfter = evictAfter
        self.bindKeys = bindKeys
        self.allow = allow
        self.deny = deny
    }

    /// Why an advertiser recognised by `decoder` at `address` with the advertised `name` (nil:
    /// not known yet) may not become an automatic device: `"deny.<list>"` or `"allow.<list>"`, the
    /// list that refuses it; nil when it may.
    package func refusal(decoder: String, address: BluetoothAddress, name: String?) -> String? {
        if let list = deny.catches(decoder: decoder, address: address, name: name) { return "deny." + list }
        if let list = allow.misses(decoder: decoder, address: address, name: name) { return "allow." + list }
        return nil
    }

    /// The bind key configured for `address`, if any.
    package func bindKey(for address: BluetoothAddress) -> [UInt8]? {
        bindKeys[address.string]
    }

    static let keys = ["enabled", "max_devices", "evict_after", "bind_keys", "allow", "deny"]
}

extension AutoDeviceSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = AutoDeviceSettings()
        enabled = try reader.bool("enabled") ?? defaults.enabled
        maxDevices = try reader.integer("max_devices", in: 1...1_000) ?? defaults.maxDevices
        evictAfter = try reader.duration("evict_after", minimum: .zero) ?? defaults.evictAfter
        let accepted = "an object of \"AA:BB:CC:DD:EE:FF\": \"<32 hex digits>\""
        var keys: [String: [UInt8]] = [:]
        for (text, keyText) in try reader.decode([String: String].self, "bind_keys", expected: accepted) ?? [:] {
            guard let address = BluetoothAddress(text) else {
                throw reader.error("bind_keys", .invalidValue, "'\(text)' is not an address; expected \(accepted)")
            }
            guard keyText.count == 32, let key = Hex.bytes(keyText) else {
                throw reader.error(
                    "bind_keys", .invalidValue, "the key for \(address.string) is not 32 hex digits (the 16-byte key)")
            }
            guard keys.updateValue(key, forKey: address.string) == nil else {
                throw reader.error("bind_keys", .conflict, "\(address.string) is listed twice")
            }
        }
        bindKeys = keys
        allow = try reader.object(AutoDeviceFilter.self, "allow") ?? AutoDeviceFilter()
        deny = try reader.object(AutoDeviceFilter.self, "deny") ?? AutoDeviceFilter()
        try Self.checkOverlap(allow: allow, deny: deny, reader: reader)
    }

    /// An entry in both lists is a contradiction (deny would win; the allow entry does nothing).
    private static func checkOverlap(allow: AutoDeviceFilter, deny: AutoDeviceFilter, reader: ObjectReader) throws {
        let both =
            allow.decoders.filter(deny.decoders.contains).map { "decoder \"\($0)\"" }
            + allow.addresses.filter(deny.addresses.contains).map {
                "address \"\(AutoDeviceFilter.format(prefix: $0))\""
            } + allow.names.filter(deny.names.contains).map { "name \"\($0)\"" }
        guard let first = both.first else { return }
        throw reader.error(
            "deny", .conflict, "\(first) is in both allow and deny (deny wins, so the allow entry would do nothing)")
    }
}
