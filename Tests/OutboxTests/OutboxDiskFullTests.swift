import Foundation
import TestSupport
import Testing

@testable import Outbox

/// Issue 19, D1, at the store: on a real, full tmpfs, acknowledged rows can still be deleted, the
/// WAL does not keep the space, and the queue grows again once space is freed.
@Suite(
    .serialized, .timeLimit(.minutes(1)),
    .enabled(if: TmpfsFixture.mountError == nil, TmpfsFixture.skipReason))
struct OutboxDiskFullTests {
    static func entry(_ seq: Int) -> OutboxEntry {
        OutboxEntry(
            topic: "readings/dev",
            payload: Array("{\"seq\":\(seq),\"pad\":\"\(String(repeating: "x", count: 1000))\"}".utf8),
            sampleTime: Date(), stream: "dev")
    }

    /// Appends batches of 50 until the store refuses for lack of space; returns how many went in.
    static func fill(_ store: OutboxStore) async throws -> Int {
        var seq = 0
        while seq < 100_000 {
            do {
                try await store.append((seq..<(seq + 50)).map(entry))
                seq += 50
            } catch {
                guard error.code == .diskFull else { throw error }
                return seq
            }
        }
        Issue.record("never full")
        return seq
    }

    @Test func deletionsWorkOnAFullDiskAndTheQueueGrowsAgainOnceSpaceIsFree() async throws {
        let disk = try TmpfsFixture(bytes: 8 * 1_048_576)
        let filler = try disk.fill("filler", bytes: 3 * 1_048_576)
        let path = "\(disk.path)/outbox.sqlite"
        let store = try await OutboxStore(path: path)
        #expect(FileManager.default.fileExists(atPath: path + "-reserve"))
        let stored = try await Self.fill(store)
        #expect(stored > 500)
        // Full: the reserve is gone, and the WAL was checkpointed down to (almost) nothing.
        #expect(!FileManager.default.fileExists(atPath: path + "-reserve"))
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal <= 65_536, "WAL of \(wal) bytes after the full disk")
        // Deleting acknowledged rows works, batch after batch.
        let ids = try await store.next(limit: stored).map(\.id)
        for batch in stride(from: 0, to: ids.count, by: 16) {
            try await store.remove(ids: Array(ids[batch..<min(batch + 16, ids.count)]))
        }
        #expect(try await store.stats().depth == 0)
        // Room inside the file again (its free pages): appends fit without growing it.
        try await store.append((0..<50).map(Self.entry))

        // Space freed: the reserve comes back and the queue grows past the pinned size.
        try FileManager.default.removeItem(at: filler)
        try await store.append((0..<50).map(Self.entry))
        #expect(FileManager.default.fileExists(atPath: path + "-reserve"))
        try await store.append((0..<400).map(Self.entry))
        #expect(try await store.stats().depth == 500)
        #expect(try await store.withConnection { try $0.texts("PRAGMA integrity_check") } == ["ok"])
    }
}
