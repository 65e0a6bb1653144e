import Bluetooth
import Foundation

/// The advertisers seen recently, for `bridge/request/scan`: address → name, RSSI and time.
///
/// Bounded: an entry older than ``maxAge`` (a little over the longest scan a request may ask for,
/// 60 s) is dropped, and beyond ``capacity`` entries the oldest go first, rotating private
/// addresses (phones, trackers) before fixed ones, so thousands of passing random addresses
/// neither grow memory nor keep it: once they are gone the table is rebuilt at its new size.
/// Compact: an address is kept as one 64-bit key and an entry as 32 bytes (a name of up to 15
/// UTF-8 bytes is stored inline), so no entry allocates for an unnamed advertiser.
/// Pure; the caller passes the time (tests move it by hand).
package struct SeenAdvertisers: Sendable {
    package struct Entry: Sendable, Equatable {
        package var name: String?
        /// Seconds since 2001 (`Date.timeIntervalSinceReferenceDate`).
        var seconds: Double
        /// dBm; `Int8.min` when the advertisement had none.
        var storedRSSI: Int8

        init(name: String?, rssi: Int?, time: Date) {
            self.name = name
            seconds = time.timeIntervalSinceReferenceDate
            storedRSSI = rssi.map { Int8(clamping: max($0, Int(Int8.min) + 1)) } ?? .min
        }

        package var rssi: Int? { storedRSSI == .min ? nil : Int(storedRSSI) }
        package var time: Date { Date(timeIntervalSinceReferenceDate: seconds) }
    }

    package let capacity: Int
    package let maxAge: TimeInterval
    /// By ``key(_:)``: the six address bytes, bit 48 set for a random address.
    private var entries: [UInt64: Entry] = [:]
    /// Addresses evicted because the table was full (not those that aged out).
    package private(set) var evicted = 0
    private var lastPrune = Date.distantPast
    /// The most entries held since the table was last rebuilt.
    private var peak = 0
    /// Entries the rebuilds dropped since ``takeReleased()`` was last called: how much memory the
    /// allocator may now hold unused.
    package private(set) var released = 0

    package init(capacity: Int = 1024, maxAge: TimeInterval = 65) {
        self.capacity = max(1, capacity)
        self.maxAge = maxAge
    }

    package var count: Int { entries.count }

    /// The entry of `address`, if it was seen within ``maxAge``.
    package func entry(for address: BluetoothAddress) -> Entry? { entries[Self.key(address)] }

    /// Records an advertisement of `address` at `time`.
    package mutating func record(_ address: BluetoothAddress, name: String?, rssi: Int?, at time: Date) {
        let key = Self.key(address)
        entries[key] = Entry(name: name ?? entries[key]?.name, rssi: rssi, time: time)
        peak = max(peak, entries.count)
        if time.timeIntervalSince(lastPrune) >= 1 { prune(now: time) }
        if entries.count > capacity { evictOldest() }
    }

    /// Entries seen at or after `since`, by address.
    package func seen(since: Date) -> [(address: BluetoothAddress, entry: Entry)] {
        let cutoff = since.timeIntervalSinceReferenceDate
        return entries.filter { $0.value.seconds >= cutoff }.sorted {
            $0.key & 0xFFFF_FFFF_FFFF < $1.key & 0xFFFF_FFFF_FFFF
        }
        .map { (address: Self.address(of: $0.key), entry: $0.value) }
    }

    /// Drops entries older than ``maxAge``; when the table has shrunk to a quarter of its peak it is
    /// rebuilt, so its storage (which a dictionary never gives back by itself) shrinks too.
    package mutating func prune(now: Date) {
        lastPrune = now
        let cutoff = now.addingTimeInterval(-maxAge).timeIntervalSinceReferenceDate
        entries = entries.filter { $0.value.seconds >= cutoff }
        if entries.count * 4 <= peak {
            entries = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
            released += peak - entries.count
            peak = entries.count
        }
    }

    /// ``released``, reset to zero: the caller gives the memory back once enough was freed.
    package mutating func takeReleased() -> Int {
        defer { released = 0 }
        return released
    }

    /// Removes the oldest eighth beyond capacity at once (one sort for many inserts): rotating
    /// private addresses first, then fixed ones (public or static random), oldest first in each.
    private mutating func evictOldest() {
        let excess = entries.count - capacity + capacity / 8
        let oldest = entries.sorted { lhs, rhs in
            let (left, right) = (Self.isFixed(lhs.key), Self.isFixed(rhs.key))
            return left == right ? lhs.value.seconds < rhs.value.seconds : !left
        }.prefix(excess)
        for (key, _) in oldest { entries[key] = nil }
        evicted += oldest.count
    }

    private static let randomBit: UInt64 = 1 << 48

    static func key(_ address: BluetoothAddress) -> UInt64 {
        let packed = address.bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return address.type == .random ? packed | randomBit : packed
    }

    static func address(of key: UInt64) -> BluetoothAddress {
        let bytes = (0..<6).reversed().map { UInt8(truncatingIfNeeded: key >> (8 * UInt64($0))) }
        // Six bytes always make an address.
        return BluetoothAddress(bytes: bytes, type: key & randomBit == 0 ? .public : .random)!
    }

    /// Public, or random static (top two bits 11): an address that does not rotate.
    private static func isFixed(_ key: UInt64) -> Bool {
        key & randomBit == 0 || (key >> 46) & 0b11 == 0b11
    }
}
