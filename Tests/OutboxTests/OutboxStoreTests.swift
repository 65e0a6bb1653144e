import Foundation
import TestSupport
import Testing

@testable import Outbox

func reading(_ stream: String, _ index: Int, at time: Date = Date(), qos: OutboxQoS = .atLeastOnce) -> OutboxEntry {
    OutboxEntry(
        topic: "blebridge/\(stream)", payload: Array("{\"n\":\(index)}".utf8), qos: qos, retain: false,
        sampleTime: time, stream: stream)
}

@Suite struct OutboxStoreTests {
    @Test func usesWALAndTheConfiguredSynchronousMode() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let normal = try await OutboxStore(path: directory.file("n.sqlite").path)
        #expect(try await normal.withConnection { try $0.texts("PRAGMA journal_mode") } == ["wal"])
        #expect(try await normal.withConnection { try $0.integer("PRAGMA synchronous") } == 1)
        let full = try await OutboxStore(
            path: directory.file("f.sqlite").path, options: OutboxOptions(synchronous: .full))
        #expect(try await full.withConnection { try $0.integer("PRAGMA synchronous") } == 2)
    }

    /// The page cache stays bounded while a queue moves through a file larger than the bound: SQLite's
    /// default let it grow with every page touched (towards 2,000 KiB), which `make soak` saw as a creep.
    @Test func thePageCacheStaysBoundedWhileTheQueueMovesThroughTheFile() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        #expect(try await store.withConnection { try $0.integer("PRAGMA cache_size") } == -128)
        let payload = Array(repeating: UInt8(ascii: "x"), count: 400)
        var highest = 0
        // 6,000 readings of ~0.5 kB (a 3 MB file), appended, read back and deleted in turns.
        for round in 0..<6 {
            let batch = (0..<1000).map { index in
                OutboxEntry(
                    topic: "blebridge/d\(index % 20)", payload: payload, qos: .atLeastOnce, retain: false,
                    sampleTime: Date(), stream: "d\(round)")
            }
            _ = try await store.append(batch)
            var cursor: Int64?
            var ids: [Int64] = []
            while true {
                let page = try await store.next(after: cursor, limit: 64)
                guard let last = page.last else { break }
                ids += page.map(\.id)
                cursor = last.id
            }
            if round % 2 == 1 { _ = try await store.remove(ids: ids) }
            highest = max(highest, try await store.withConnection { $0.pageCacheBytes })
        }
        // 128 KiB of pages and SQLite's per-page headers; the default reached 1.0 MB here.
        #expect(highest <= 160 * 1024, "page cache \(highest) bytes")
    }

    @Test func returnsEntriesInAppendOrderWithEverythingKept() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let base = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded() + 0.123456)
        let batch = (0..<250).map { reading($0 % 2 == 0 ? "hr_strap" : "thermometer", $0, at: base + Double($0)) }
        let ids = try await store.append(batch)
        #expect(ids == ids.sorted())
        let retained = OutboxEntry(
            topic: "blebridge/x", payload: [], qos: .exactlyOnce, retain: true, sampleTime: base, stream: "x")
        try await store.append(retained)

        var all: [OutboxRecord] = []
        var cursor: Int64?
        while true {
            let page = try await store.next(after: cursor, limit: 64)
            guard let last = page.last else { break }
            all += page
            cursor = last.id
        }
        #expect(all.count == 251)
        let expected = batch + [retained]
        let same =
            all.map(\.entry.topic) == expected.map(\.topic) && all.map(\.entry.payload) == expected.map(\.payload)
            && all.map(\.entry.stream) == expected.map(\.stream)
        #expect(same)
        let times = all.map { OutboxDatabase.microseconds($0.entry.sampleTime) }
        #expect(times == expected.map { OutboxDatabase.microseconds($0.sampleTime) })
        #expect(times.first.map { $0 % 1_000_000 } == 123_456)
        #expect(all.last?.entry.retain == true)
        #expect(all.last?.entry.qos == .exactlyOnce)
        #expect(all.last?.entry.payload == [])
    }

    @Test func removesOnlyAcknowledgedEntriesAndRemembersAcrossReopen() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        do {
            let store = try await OutboxStore(path: path)
            let ids = try await store.append((0..<10).map { reading("dev", $0) })
            #expect(try await store.remove(ids: [ids[0], ids[1], ids[5], 999_999]) == 3)
            let stats = try await store.stats()
            #expect(stats.depth == 7)
            #expect(stats.delivered == 3)
            #expect(
                stats.bytes == (0..<10).filter { ![0, 1, 5].contains($0) }.map { reading("dev", $0).size }.reduce(0, +))
        }
        let reopened = try await OutboxStore(path: path)
        let left = try await reopened.next(limit: 100)
        #expect(left.map(\.entry.payload) == [2, 3, 4, 6, 7, 8, 9].map { reading("dev", $0).payload })
        #expect(try await reopened.stats().delivered == 3)
        // Ids keep increasing after removals, so order holds across restarts.
        let all = try await reopened.next(limit: 100)
        try await reopened.remove(ids: all.map(\.id))
        let newID = try await reopened.append(reading("dev", 10))
        #expect(newID > all.last!.id)
    }

    /// Ids are issued by the store, above the highest it ever issued: not after the queue emptied
    /// (acknowledged, or dropped by a cap in the append itself), not after a restart; and no append
    /// writes SQLite's `sqlite_sequence` (AUTOINCREMENT did, a page more in every commit).
    @Test func idsNeverGoBackAfterTheQueueEmptiesOrTheStoreReopens() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let options = OutboxOptions(maxAge: .seconds(3600))
        var issued: [Int64] = []
        do {
            let store = try await OutboxStore(path: path, options: options)
            issued += try await store.append((0..<5).map { reading("dev", $0) })
            try await store.remove(ids: issued)
        }
        do {
            let store = try await OutboxStore(path: path, options: options)
            let after = try await store.append(reading("dev", 5))
            #expect(after > issued.max()!)
            issued.append(after)
            try await store.remove(ids: [after])
            // A reading past the age cap is dropped by its own append: the queue is empty again.
            issued.append(try await store.append(reading("dev", 6, at: Date().addingTimeInterval(-7200))))
            #expect(try await store.stats().depth == 0)
            #expect(try await store.stats().dropped[.age] == 1)
        }
        let store = try await OutboxStore(path: path, options: options)
        issued.append(try await store.append(reading("dev", 7)))
        #expect(issued == issued.sorted() && Set(issued).count == issued.count, "ids \(issued)")
        let sequenceRows = try await store.withConnection {
            try $0.integer("SELECT count(*) FROM sqlite_sequence WHERE name = 'outbox'")
        }
        #expect(sequenceRows == 0)
    }

    /// A second store on the same file (a second process given the same `outbox.path`) takes ids
    /// this one meant to issue: its next append reads the highest again instead of failing on the
    /// taken ids, and no row is lost.
    @Test func anotherWriterOnTheSameFileDoesNotBlockAppends() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let first = try await OutboxStore(path: path)
        let second = try await OutboxStore(path: path)
        let a = try await first.append((0..<3).map { reading("a", $0) })
        let b = try await second.append((0..<3).map { reading("b", $0) })
        let c = try await first.append((3..<5).map { reading("a", $0) })
        #expect(Set(a + b + c).count == 8)
        #expect(b.min()! > a.max()! && c.min()! > b.max()!)
        let rows = try await first.next(limit: 100)
        #expect(rows.map(\.id) == a + b + c)
    }

    /// Removal deletes runs of consecutive ids with one statement each: out of order, repeated,
    /// gapped and unknown ids remove exactly the rows named, each counted once.
    @Test func removalByRunsRemovesExactlyTheNamedRows() async throws {
        #expect(OutboxDatabase.consecutiveRuns([]) == [])
        #expect(OutboxDatabase.consecutiveRuns([9, 3, 4, 4, 5, 11, 10, 1]) == [1...1, 3...5, 9...11])
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        let ids = try await store.append((0..<20).map { reading("dev", $0) })
        let named = [ids[7], ids[3], ids[4], ids[4], ids[5], ids[12], ids[19], ids[18], ids[19] + 100]
        #expect(try await store.remove(ids: named) == 7)
        let left = try await store.next(limit: 100).map(\.id)
        #expect(left == ids.filter { !named.contains($0) })
        let stats = try await store.stats()
        #expect(stats.delivered == 7)
        let keptBytes = (0..<20).filter { !named.contains(ids[$0]) }.map { reading("dev", $0).size }.reduce(0, +)
        #expect(stats.bytes == keptBytes)
    }

    @Test func statsReportTheOldestSampleTime() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        #expect(try await store.stats().oldestSampleTime == nil)
        let old = Date().addingTimeInterval(-90)
        try await store.append([reading("a", 0, at: old), reading("a", 1)])
        let stats = try await store.stats()
        let age = try #require(stats.oldestAge(now: Date()))
        #expect(age >= .seconds(89) && age < .seconds(120))
    }

    @Test func closedStoreThrowsClosed() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let store = try await OutboxStore(path: directory.file("o.sqlite").path)
        await store.close()
        let error = await expectThrows(OutboxError.self) { try await store.append(reading("a", 0)) }
        #expect(error?.code == .closed)
    }
}
