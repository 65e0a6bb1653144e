import Foundation
import Testing

@testable import Gateway

/// `BLELink`'s table of recent advertisers stays bounded with thousands of passing addresses and
/// empties once they are gone (issue 17: RSS grew by 20 MB over 30,000 random addresses).
@Suite struct SeenAdvertisersTests {
    static func address(_ index: Int) -> String {
        let bytes = [0x40 | (index >> 16) & 0x3F, (index >> 8) & 0xFF, index & 0xFF]
        return "7A:00:00:" + bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    @Test func thirtyThousandPassingAddressesNeverHoldMoreThanTheCapacity() {
        var seen = SeenAdvertisers(capacity: 1_000, maxAge: 65)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var largest = 0
        // 30,000 addresses, 100 a second (5 minutes), each advertising once.
        for index in 0..<30_000 {
            seen.record(Self.address(index), name: nil, rssi: -90, at: start.addingTimeInterval(Double(index) / 100))
            largest = max(largest, seen.count)
        }
        #expect(largest <= 1_000)
        #expect(seen.count <= 1_000)
        #expect(seen.evicted > 0, "100 a second for 65 s exceeds 1,000: the oldest were evicted")
        // A minute later, with no advertisement at all, they are gone.
        seen.prune(now: start.addingTimeInterval(300 + 66))
        #expect(seen.count == 0)
    }

    @Test func entriesOlderThanTheMaximumAgeAreDroppedAndRecentOnesKept() {
        var seen = SeenAdvertisers(capacity: 100, maxAge: 65)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        seen.record("C0:FF:EE:00:00:01", name: "Polar", rssi: -60, at: start)
        seen.record("C0:FF:EE:00:00:02", name: nil, rssi: -70, at: start.addingTimeInterval(30))
        seen.record("C0:FF:EE:00:00:01", name: nil, rssi: -61, at: start.addingTimeInterval(31))
        #expect(seen.entries["C0:FF:EE:00:00:01"]?.name == "Polar", "a name once seen is kept")
        seen.prune(now: start.addingTimeInterval(96))
        #expect(seen.entries.keys.sorted() == ["C0:FF:EE:00:00:01"])
        #expect(seen.seen(since: start.addingTimeInterval(31)).map(\.address) == ["C0:FF:EE:00:00:01"])
        #expect(seen.seen(since: start.addingTimeInterval(32)).isEmpty)
    }

    @Test func aFullTableEvictsTheOldestFirst() {
        var seen = SeenAdvertisers(capacity: 8, maxAge: 3_600)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<9 {
            seen.record(Self.address(index), name: nil, rssi: nil, at: start.addingTimeInterval(Double(index) / 1_000))
        }
        #expect(seen.count <= 8)
        #expect(seen.entries[Self.address(0)] == nil, "the oldest went first")
        #expect(seen.entries[Self.address(8)] != nil)
    }

    /// What the rebuilds dropped is counted once, for the caller's `malloc_trim` (BLELink).
    @Test func theEntriesARebuildDroppedAreCountedForGivingMemoryBack() {
        var seen = SeenAdvertisers(capacity: 5_000, maxAge: 65)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<2_000 { seen.record(Self.address(index), name: nil, rssi: nil, at: start) }
        seen.record(Self.address(9_999), name: nil, rssi: nil, at: start.addingTimeInterval(60))
        seen.prune(now: start.addingTimeInterval(30))
        #expect(seen.released == 0, "nothing aged out yet")
        seen.prune(now: start.addingTimeInterval(100))
        #expect(seen.count == 1)
        #expect(seen.released == 2_000, "the table was rebuilt from 2,001 to 1")
        #expect(seen.takeReleased() == 2_000)
        #expect(seen.released == 0, "taken once")
        seen.prune(now: start.addingTimeInterval(200))
        #expect(seen.takeReleased() == 1)
    }
}
