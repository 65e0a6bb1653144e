import JSON

/// Passing devices: `total` advertisers with random private addresses (phones, trackers walking by),
/// `rate` new ones a second from `start` on, each advertising for `lifetime` and then gone, its
/// device object removed as bluetoothd removes a temporary device. For memory benchmarks of a
/// central that sees thousands of addresses a day.
package struct ScenarioPassing: Sendable, Equatable, Decodable {
    package var rate: Double
    package var total: Int
    package var lifetime: Duration
    package var start: Duration

    package init(rate: Double, total: Int, lifetime: Duration = .seconds(2), start: Duration = .zero) {
        self.rate = rate
        self.total = total
        self.lifetime = lifetime
        self.start = start
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case rate, total, lifetime, start }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rate = try container.decode(Double.self, forKey: .rate)
        guard rate > 0, rate <= 5_000 else {
            throw container.invalid(.rate, "invalid rate \(rate); expected new devices per second, 0 < rate ≤ 5000")
        }
        total = try container.decode(Int.self, forKey: .total)
        guard (1...10_000_000).contains(total) else {
            throw container.invalid(.total, "invalid total \(total); expected 1…10000000")
        }
        lifetime = try container.decodeIfPresent(ScenarioDuration.self, forKey: .lifetime)?.duration ?? .seconds(2)
        guard lifetime >= .milliseconds(100) else { throw container.invalid(.lifetime, "lifetime below 100 ms") }
        start = try container.decodeIfPresent(ScenarioDuration.self, forKey: .start)?.duration ?? .zero
    }
}

/// How far passing mode has come (``BlueZSimulator/passingStatistics()``).
package struct PassingStatistics: Sendable, Equatable {
    /// Devices that appeared so far.
    package var appeared: Int
    /// Devices whose time was up and whose object was removed.
    package var gone: Int
    /// Passing devices in the world now.
    package var present: Int { appeared - gone }
}
