import Timekeeping

/// `outbox`: the SQLite store-and-forward queue between readings and the broker.
package struct OutboxSettings: Sendable, Equatable {
    /// SQLite `PRAGMA synchronous` (the `Outbox` module maps it).
    package enum Synchronous: String, ConfigurationEnum {
        /// Durable across a process crash (WAL); the default.
        case normal
        /// Also durable across power loss, at a large cost in write throughput.
        case full
    }

    /// When readings are written to the database (`mode`).
    package enum Mode: String, ConfigurationEnum {
        /// Readings are published from memory while the broker acknowledges them within
        /// `spill_after`; written to the database only when an acknowledgement is late, the broker
        /// is away, or the gateway stops. The default: an SD card is written a few MB a day instead
        /// of GBs, and a crash or power cut loses at most the last `spill_after` of unacknowledged readings.
        case memoryFirst = "memory_first"
        /// Every reading is committed to the database before it is published.
        case durable
    }

    package var mode: Mode
    /// Memory-first mode: how long a reading published from memory may wait for its acknowledgement
    /// before everything held is written to the database.
    package var spillAfter: Duration
    /// Database file; a relative path is relative to the working directory.
    package var path: String
    package var synchronous: Synchronous
    /// Oldest messages are dropped beyond this many…
    package var maxMessages: Int
    /// …or beyond this many bytes of payload…
    package var maxBytes: Int
    /// …or when older than this.
    package var maxAge: Duration
    /// Messages published but not yet acknowledged at any time.
    package var inflight: Int

    package init(
        path: String = "blebridge.sqlite", synchronous: Synchronous = .normal, maxMessages: Int = 1_000_000,
        maxBytes: Int = 268_435_456, maxAge: Duration = .seconds(7 * 86400), inflight: Int = 64,
        mode: Mode = .memoryFirst, spillAfter: Duration = .seconds(2)
    ) {
        self.mode = mode
        self.spillAfter = spillAfter
        self.path = path
        self.synchronous = synchronous
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
        self.maxAge = maxAge
        self.inflight = inflight
    }

    static let keys = [
        "path", "synchronous", "max_messages", "max_bytes", "max_age", "inflight", "mode", "spill_after",
    ]
}

extension OutboxSettings {
    /// `memory_first (spill after 2s)` or `durable`, for the configuration summary.
    package var modeSummary: String {
        switch mode {
        case .memoryFirst: "memory_first, spill after \(DurationParser.format(spillAfter))"
        case .durable: "durable"
        }
    }
}

extension OutboxSettings: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        let defaults = OutboxSettings()
        path = try reader.nonEmptyString("path", expected: "the path of the SQLite database file") ?? defaults.path
        synchronous = try reader.enumeration(Synchronous.self, "synchronous") ?? defaults.synchronous
        maxMessages = try reader.integer("max_messages", in: 1...1_000_000_000) ?? defaults.maxMessages
        maxBytes = try reader.integer("max_bytes", in: 65536...(1 << 40)) ?? defaults.maxBytes
        maxAge = try reader.duration("max_age", minimum: .seconds(1)) ?? defaults.maxAge
        inflight = try reader.integer("inflight", in: 1...65535) ?? defaults.inflight
        mode = try reader.enumeration(Mode.self, "mode") ?? defaults.mode
        spillAfter =
            try reader.duration("spill_after", minimum: .milliseconds(100), maximum: .seconds(60))
            ?? defaults.spillAfter
    }
}
