/// `auto_devices`: zero-configuration devices. When enabled, an advertiser that no `devices[]`
/// entry matches, whose address is fixed (public or random static) and whose advertisement a
/// built-in decoder recognises, is published as a passive device `<decoder>_<last 3 address
/// bytes>` with Home Assistant discovery, without a configuration entry.
public struct AutoDeviceSettings: Sendable, Equatable {
    public var enabled: Bool
    /// The most automatic devices followed at once; beyond it a new one takes the place of the one
    /// seen least recently if that one has not been seen for ``evictAfter`` (counted and logged),
    /// and is refused otherwise (counted, logged at most once a minute).
    public var maxDevices: Int
    /// How long an automatic device must have gone unseen before a new one may take its place.
    public var evictAfter: Duration

    public init(enabled: Bool = false, maxDevices: Int = 100, evictAfter: Duration = .seconds(600)) {
        self.enabled = enabled
        self.maxDevices = maxDevices
        self.evictAfter = evictAfter
    }

    static let keys = ["enabled", "max_devices", "evict_after"]
}

extension AutoDeviceSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = AutoDeviceSettings()
        enabled = try reader.bool("enabled") ?? defaults.enabled
        maxDevices = try reader.integer("max_devices", in: 1...1_000) ?? defaults.maxDevices
        evictAfter = try reader.duration("evict_after", minimum: .zero) ?? defaults.evictAfter
    }
}
