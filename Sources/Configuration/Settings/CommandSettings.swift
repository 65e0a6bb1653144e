/// `commands`: gateway-wide rules for commands arriving over MQTT.
package struct CommandSettings: Sendable, Equatable {
    package var rawGATT: RawGATTSettings
    /// Default per-device command rate limit (a device's own `rate_limit` overrides it).
    package var rateLimit: RateLimit

    package init(
        rawGATT: RawGATTSettings = RawGATTSettings(), rateLimit: RateLimit = RateLimit(count: 10, period: .seconds(1))
    ) {
        self.rawGATT = rawGATT
        self.rateLimit = rateLimit
    }

    static let keys = ["raw_gatt", "rate_limit"]
}

extension CommandSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = CommandSettings()
        rawGATT = try reader.object(RawGATTSettings.self, "raw_gatt") ?? defaults.rawGATT
        rateLimit = try reader.rateLimit("rate_limit") ?? defaults.rateLimit
    }
}
