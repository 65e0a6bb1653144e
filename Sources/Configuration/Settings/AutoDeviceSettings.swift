/// `auto_devices`: zero-configuration devices. When enabled, an advertiser that no `devices[]`
/// entry matches, whose address is fixed (public or random static) and whose advertisement a
/// built-in decoder recognises, is published as a passive device `<decoder>_<last 3 address
/// bytes>` with Home Assistant discovery, without a configuration entry.
public struct AutoDeviceSettings: Sendable, Equatable {
    public var enabled: Bool
    /// The most automatic devices followed at once; beyond it the one seen least recently is
    /// dropped (counted and logged).
    public var maxDevices: Int

    public init(enabled: Bool = false, maxDevices: Int = 100) {
        self.enabled = enabled
        self.maxDevices = maxDevices
    }

    static let keys = ["enabled", "max_devices"]
}

extension AutoDeviceSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = AutoDeviceSettings()
        enabled = try reader.bool("enabled") ?? defaults.enabled
        maxDevices = try reader.integer("max_devices", in: 1...1_000) ?? defaults.maxDevices
    }
}
