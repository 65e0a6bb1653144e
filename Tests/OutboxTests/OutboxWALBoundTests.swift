import Foundation
import TestSupport
import Testing

@testable import Outbox

/// The WAL's bound under the disk reserve (issue 19, D1) without a cut at every checkpoint
/// (issue 20): the file keeps the size the bound takes, and stays under the reserve.
@Suite struct OutboxWALBoundTests {
    @Test func theWALKeepsItsSizeAcrossCheckpointsAndStaysUnderTheReserve() async throws {
        let directory = try TemporaryDirectory(prefix: "outbox")
        let path = directory.file("o.sqlite").path
        let options = OutboxOptions()
        let store = try await OutboxStore(path: path, options: options)
        // Readings committed one by one and deleted a few behind, as a gateway in steady state
        // does: each commit adds a few frames, and every 128 frames a checkpoint resets the WAL.
        var sizes: [Int] = []
        for index in 0..<1_200 {
            try await store.append(reading("dev", index))
            if index >= 8 {
                let oldest = try await store.next(limit: 1).map(\.id)
                try await store.remove(ids: oldest)
            }
            sizes.append((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0)
        }
        let pageSize = 4096
        let bound =
            OutboxDatabase.walHeaderBytes
            + (options.diskReserve / 2 / pageSize + OutboxDatabase.walSlackFrames)
            * (pageSize + OutboxDatabase.walFrameHeaderBytes)
        let peak = sizes.max() ?? 0
        // The loop went through several checkpoints (the WAL reached the bound long before its end).
        let reachedBound = sizes.firstIndex { $0 >= options.diskReserve / 2 } ?? sizes.count
        #expect(reachedBound < sizes.count / 3, "the WAL reached \(peak) bytes")
        #expect(peak <= bound, "WAL of \(peak) bytes, bound \(bound)")
        #expect(peak < options.diskReserve)
        // Never cut: a limit under the size the bound takes truncated the file at each reset, and
        // the next cycle grew it again.
        let cuts = zip(sizes, sizes.dropFirst()).filter { $0 > $1 }.count
        #expect(cuts == 0, "the WAL was cut \(cuts) times")
    }
}
