import Bluetooth
import Foundation
import Testing

@testable import Gateway

/// `BLELink`'s table of recent advertisers stays bounded with thousands of passing addresses and
/// empties once they are gone (issue 17: RSS grew by 20 MB over 30,000 random addresses).
@Suite struct SeenAdvertisersTests {
    /// A resolvable private address (top bits 01), as phones rotate.
    static func address(_ index: Int) -> BluetoothAddress {
        let bytes = [0x40 | (index >> 16) & 0x3F, (index >> 8) & 0xFF, index & 0xFF].map(UInt8.init)
        return BluetoothAddress(bytes: bytes + [0, 0, 0], type: .random)!
    }

    static func fixed(_ text: String) -> BluetoothAddress { BluetoothAddress(text)! }

    @Test func thirtyThousandPassingAddressesNeverHoldMoreThanTheCapacity() async {
        var seen = SeenAdvertisers(capacity: 1_000, maxAge: 65)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var largest = 0
        // 30,000 addresses, 100 a second (5 minutes), each advertising once.
        for index in 0..<30_000 {
            // A CPU-bound loop must not hold a cooperative thread for seconds (docs/testing.md).
            if index % 1024 == 0 { await Task.yield() }
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
        seen.record(Self.fixed("C0:FF:EE:00:00:01"), name: "Polar", rssi: -60, at: start)
        seen.record(Self.fixed("C0:FF:EE:00:00:02"), name: nil, rssi: -70, at: start.addingTimeInterval(30))
        seen.record(Self.fixed("C0:FF:EE:00:00:01"), name: nil, rssi: -61, at: start.addingTimeInterval(31))
        #expect(seen.entry(for: Self.fixed("C0:FF:EE:00:00:01"))?.name == "Polar", "a name once seen is kept")
        #expect(seen.entry(for: Self.fixed("C0:FF:EE:00:00:01"))?.rssi == -61)
        seen.prune(now: start.addingTimeInterval(96))
        #expect(seen.count == 1)
        #expect(seen.seen(since: start.addingTimeInterval(31)).map(\.address.string) == ["C0:FF:EE:00:00:01"])
        #expect(seen.seen(since: start.addingTimeInterval(32)).isEmpty)
    }

    @Test func aFullTableEvictsTheOldestFirst() {
        var seen = SeenAdvertisers(capacity: 8, maxAge: 3_600)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<9 {
            seen.record(Self.address(index), name: nil, rssi: nil, at: start.addingTimeInterval(Double(index) / 1_000))
        }
        #expect(seen.count <= 8)
        #expect(seen.entry(for: Self.address(0)) == nil, "the oldest went first")
        #expect(seen.entry(for: Self.address(8)) != nil)
    }

    /// A full table drops rotating private addresses before fixed ones, however old.
    @Test func aFullTableEvictsPassingPrivateAddressesBeforeFixedOnes() {
        var seen = SeenAdvertisers(capacity: 8, maxAge: 3_600)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let sensor = Self.fixed("C0:FF:EE:00:00:01")
        let staticRandom = BluetoothAddress(bytes: [0xE1, 0, 0, 0, 0, 2], type: .random)!
        seen.record(sensor, name: "Sensor", rssi: -70, at: start)
        seen.record(staticRandom, name: nil, rssi: nil, at: start)
        for index in 0..<20 {
            seen.record(Self.address(index), name: nil, rssi: -90, at: start.addingTimeInterval(Double(index + 1)))
        }
        #expect(seen.count <= 8)
        #expect(seen.entry(for: sensor)?.name == "Sensor")
        #expect(seen.entry(for: staticRandom) != nil)
        #expect(seen.entry(for: Self.address(19)) != nil)
        #expect(seen.evicted > 0)
    }

    /// The compact key gives back the address and its type, and a missing RSSI stays missing.
    @Test func addressesAndReadingsSurviveTheCompactRepresentation() {
        var seen = SeenAdvertisers(capacity: 8, maxAge: 65)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let random = BluetoothAddress(bytes: [0x7A, 0x01, 0x02, 0x03, 0x04, 0xFF], type: .random)!
        seen.record(random, name: nil, rssi: nil, at: start)
        seen.record(Self.fixed("00:00:00:00:00:01"), name: "Long name of a thermometer", rssi: -127, at: start)
        let listed = seen.seen(since: start)
        #expect(listed.map(\.address) == [Self.fixed("00:00:00:00:00:01"), random])
        #expect(listed.map(\.address.type) == [.public, .random])
        #expect(listed[0].entry.name == "Long name of a thermometer")
        #expect(listed[0].entry.rssi == -127)
        #expect(listed[1].entry.rssi == nil)
        #expect(listed[1].entry.time == start)
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
