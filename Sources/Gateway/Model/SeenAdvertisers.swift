public import Foundation

/// The advertisers seen recently, for `bridge/request/scan`: address → name, RSSI and time.
///
/// Bounded: an entry older than ``maxAge`` (a little over the longest scan a request may ask for,
/// 60 s) is dropped,
/// and beyond ``capacity`` entries the oldest go first, so thousands of passing random addresses
/// (phones, trackers) neither grow memory nor keep it: once they are gone the table is rebuilt at
/// its new size. Pure; the caller passes the time (tests move it by hand).
public struct SeenAdvertisers: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String?
        public var rssi: Int?
        public var time: Date
    }

    public let capacity: Int
    public let maxAge: TimeInterval
    public private(set) var entries: [String: Entry] = [:]
    /// Addresses evicted because the table was full (not those that aged out).
    public private(set) var evicted = 0
    private var lastPrune = Date.distantPast
    /// The most entries held since the table was last rebuilt.
    private var peak = 0
    /// Entries the rebuilds dropped since ``takeReleased()`` was last called: how much memory the
    /// allocator may now hold unused.
    public private(set) var released = 0

    public init(capacity: Int = 4096, maxAge: TimeInterval = 65) {
        self.capacity = max(1, capacity)
        self.maxAge = maxAge
    }

    public var count: Int { entries.count }

    /// Records an advertisement of `address` at `time`.
    public mutating func record(_ address: String, name: String?, rssi: Int?, at time: Date) {
        entries[address] = Entry(name: name ?? entries[address]?.name, rssi: rssi, time: time)
        peak = max(peak, entries.count)
        if time.timeIntervalSince(lastPrune) >= 1 { prune(now: time) }
        if entries.count > capacity { evictOldest() }
    }

    /// Entries seen at or after `since`, by address.
    public func seen(since: Date) -> [(address: String, entry: Entry)] {
        entries.filter { $0.value.time >= since }.map { (address: $0.key, entry: $0.value) }
            .sorted { $0.address < $1.address }
    }

    /// Drops entries older than ``maxAge``; when the table has shrunk to a quarter of its peak it is
    /// rebuilt, so its storage (which a dictionary never gives back by itself) shrinks too.
    public mutating func prune(now: Date) {
        lastPrune = now
        let cutoff = now.addingTimeInterval(-maxAge)
        entries = entries.filter { $0.value.time >= cutoff }
        if entries.count * 4 <= peak {
            entries = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
            released += peak - entries.count
            peak = entries.count
        }
    }

    /// ``released``, reset to zero: the caller gives the memory back once enough was freed.
    public mutating func takeReleased() -> Int {
        defer { released = 0 }
        return released
    }

    /// Removes the oldest eighth beyond capacity at once (one sort for many inserts).
    private mutating func evictOldest() {
        let excess = entries.count - capacity + capacity / 8
        let oldest = entries.sorted { $0.value.time < $1.value.time }.prefix(excess)
        for (address, _) in oldest { entries[address] = nil }
        evicted += oldest.count
    }
}
