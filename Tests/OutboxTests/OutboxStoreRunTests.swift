import EventLoop
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Outbox

#if canImport(Glibc)
    import Glibc
#endif

extension OutboxStore {
    /// The thread the store's own jobs run on.
    fileprivate func jobThread() -> pthread_t { pthread_self() }

    /// A job of the store's (a call through the actor) that leaves a mark.
    fileprivate func mark(_ log: OrderLog, _ label: String) { log.append(label) }
}

/// What ran, in order, and on which thread.
private final class OrderLog: Sendable {
    private let entries = Mutex<[String]>([])
    private let threads = Mutex<[pthread_t]>([])

    func append(_ label: String) {
        entries.withLock { $0.append(label) }
        threads.withLock { $0.append(pthread_self()) }
    }

    var labels: [String] { entries.withLock { $0 } }
    var threadIDs: [pthread_t] { threads.withLock { $0 } }
}

/// `OutboxStore.run(_:)` / `run(after:_:)` (closures and timers on the store's thread) and
/// `appendRecords(_:)` (the rows as stored, without reading them back).
@Suite struct OutboxStoreRunTests {
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "outbox-run")
    }

    private func store(_ options: OutboxOptions = OutboxOptions()) async throws -> OutboxStore {
        try await OutboxStore(path: directory.file("o.sqlite").path, options: options)
    }

    @Test func closuresRunOnTheStoresThreadInFIFOOrderWithItsJobs() async throws {
        let store = try await store()
        let log = OrderLog()
        for index in 0..<100 { store.run { _ in log.append("closure \(index)") } }
        // A job enqueued after the closures runs after them all.
        await store.mark(log, "job")
        #expect(log.labels == (0..<100).map { "closure \($0)" } + ["job"])
        let storeThread = await store.jobThread()
        #expect(log.threadIDs.allSatisfy { pthread_equal($0, storeThread) != 0 })
        #expect(pthread_equal(storeThread, pthread_self()) == 0)

        // From the store's thread: closures and a job (a task isolated to the store) interleaved keep
        // the order they were queued in.
        let interleaved = OrderLog()
        let done = Mutex(false)
        store.run { isolatedStore in
            interleaved.append("1")
            isolatedStore.run { _ in interleaved.append("2") }
            Task {
                isolatedStore.mark(interleaved, "3")
            }
            isolatedStore.run { _ in
                interleaved.append("4")
                done.withLock { $0 = true }
            }
        }
        #expect(await waitUntil { done.withLock { $0 } && interleaved.labels.count == 4 })
        #expect(interleaved.labels == ["1", "2", "3", "4"])
    }

    @Test func closuresAreIsolatedToTheStore() async throws {
        let store = try await store()
        let depth = Mutex<Int?>(nil)
        store.run { isolatedStore in
            // Plain synchronous calls: the closure runs isolated to the store.
            _ = try? isolatedStore.append(reading("s", 1))
            depth.withLock { $0 = try? isolatedStore.stats().depth }
        }
        #expect(await waitUntil { depth.withLock { $0 } != nil })
        #expect(depth.withLock { $0 } == 1)
    }

    /// On a manual clock, so the order does not depend on how fast the 52 timers are set: under
    /// ThreadSanitizer at load 20, setting them on the real clock took longer than the 90 ms
    /// between "a"'s deadline and the first "b"'s, and 42 "b"s ran before "a".
    @Test func timersRunAfterTheirDelayInDeadlineOrderAndSameDelaysInTheOrderSet() async throws {
        let clock = ManualClock()
        let store = try await OutboxStore(
            path: directory.file("o.sqlite").path, clock: clock,
            loop: try EventLoop(name: "blebridge.outbox", clock: clock))
        let log = OrderLog()
        let early = Mutex<[String]>([])
        let start = clock.now
        func timer(_ label: String, _ delay: Duration) {
            let set = clock.now
            store.run(after: delay) { _ in
                if clock.now - set < delay { early.withLock { $0.append(label) } }
                log.append(label)
            }
        }
        for index in 0..<50 { timer("b\(index)", .milliseconds(150)) }
        timer("a", .milliseconds(60))  // set later, due earlier
        store.run { _ in log.append("now") }
        #expect(await waitUntil { log.labels == ["now"] })
        clock.advance(by: .milliseconds(59))
        await store.mark(log, "59 ms")  // a job behind any timer the move made due
        clock.advance(by: .milliseconds(1))
        #expect(await waitUntil { log.labels.count == 3 })
        #expect(log.labels == ["now", "59 ms", "a"])
        clock.advance(by: .milliseconds(89))
        await store.mark(log, "149 ms")
        clock.advance(by: .milliseconds(1))
        #expect(await waitUntil { log.labels.count == 54 })
        #expect(early.withLock { $0 }.isEmpty, "timers ran before their delay")
        #expect(log.labels == ["now", "59 ms", "a", "149 ms"] + (0..<50).map { "b\($0)" })
        #expect(clock.now - start == .milliseconds(150))
        let storeThread = await store.jobThread()
        #expect(log.threadIDs.allSatisfy { pthread_equal($0, storeThread) != 0 })
    }

    /// A timer set while the thread sleeps towards a later deadline fires on time, and work queued
    /// meanwhile does not wait for any timer.
    @Test func aNearerTimerAndQueuedWorkDoNotWaitForALaterTimer() async throws {
        let store = try await store()
        let log = OrderLog()
        store.run(after: .seconds(10)) { _ in log.append("late") }
        // The thread has gone (or is going) to wait for the 10 s deadline.
        #expect(store.loop.nextDeadline != nil)
        let clock = ContinuousClock()
        let start = clock.now
        store.run(after: .milliseconds(50)) { _ in log.append("near") }
        store.run { _ in log.append("now") }
        await store.mark(log, "job")
        #expect(await waitUntil(timeout: .seconds(5)) { log.labels.count == 3 })
        #expect(log.labels == ["now", "job", "near"])
        #expect(clock.now - start < .seconds(5))
    }

    @Test func appendRecordsReturnsTheRowsAsNextReadsThemBack() async throws {
        let store = try await store()
        try await store.append(reading("old", 0))
        let entries = (1...20).map {
            OutboxEntry(
                topic: "blebridge/dev\($0 % 3)", payload: Array("{\"n\":\($0)}".utf8),
                qos: $0 % 2 == 0 ? .atLeastOnce : .atMostOnce, retain: $0 == 7, sampleTime: Date(),
                stream: "dev\($0 % 3)")
        }
        let records = try await store.appendRecords(entries)
        #expect(records.count == 20)
        #expect(records.map(\.id) == records.map(\.id).sorted())
        let first = try #require(records.first)
        let readBack = try await store.next(after: first.id - 1, limit: 100)
        #expect(readBack == records)
        #expect(records.map(\.entry.payload) == entries.map(\.payload))
    }

    /// Acknowledged rows removed with an append go in its transaction: the same rows, counts and
    /// bytes as a removal and an append of their own, in fewer WAL frames (each transaction writes
    /// every page it changed, and both change the queue's pages and the counters).
    @Test func appendRecordsRemovesAcknowledgedRowsInTheSameTransaction() async throws {
        func run(_ name: String, together: Bool) async throws -> (
            frames: Int64, rows: [OutboxRecord], stats: OutboxStats
        ) {
            let store = try await OutboxStore(path: directory.file(name).path)
            let first = try await store.appendRecords((0..<8).map { reading("s", $0) })
            let acknowledged = first.prefix(5).map(\.id)
            _ = try await store.withConnection { try $0.texts("PRAGMA wal_checkpoint(TRUNCATE)") }
            let next = (8..<16).map { reading("s", $0) }
            if together {
                _ = try await store.appendRecords(next, removing: acknowledged)
            } else {
                try await store.remove(ids: acknowledged)
                _ = try await store.appendRecords(next)
            }
            let frames = try await store.withConnection { connection in
                let checkpoint = try connection.prepare("PRAGMA wal_checkpoint(PASSIVE)")
                _ = try checkpoint.step()
                return checkpoint.int64(at: 1)
            }
            return (frames, try await store.next(limit: 100), try await store.stats())
        }
        let apart = try await run("apart.sqlite", together: false)
        let together = try await run("together.sqlite", together: true)
        #expect(together.rows.map(\.id) == apart.rows.map(\.id))
        #expect(together.rows.map(\.entry.payload) == (5..<16).map { Array("{\"n\":\($0)}".utf8) })
        #expect(together.stats.delivered == 5)
        #expect(together.stats.depth == 11)
        #expect(together.stats.bytes == apart.stats.bytes)
        #expect(together.frames < apart.frames, "WAL frames: \(together.frames) together, \(apart.frames) apart")

        // A refused append leaves the acknowledged rows too (one transaction), and so does a reopen.
        let store = try await store(OutboxOptions(maxBytes: 65_536))
        let rows = try await store.appendRecords((0..<3).map { reading("s", $0) })
        let oversized = OutboxEntry(
            topic: "blebridge/s", payload: Array(repeating: 0, count: 70_000), qos: .atLeastOnce, retain: false,
            sampleTime: Date(), stream: "s")
        await #expect(throws: OutboxError.self) {
            try await store.appendRecords([oversized], removing: rows.map(\.id))
        }
        #expect(try await store.next(limit: 10) == rows)
        #expect(try await store.stats().delivered == 0)
        // Nothing to append: the removal alone.
        #expect(try await store.appendRecords([], removing: rows.map(\.id)).isEmpty)
        #expect(try await store.next(limit: 10).isEmpty)
        #expect(try await store.stats().delivered == 3)
    }

    @Test func appendRecordsOmitsRowsACapRemovedAtOnce() async throws {
        let store = try await store(OutboxOptions(maxMessages: 3, maxAge: .seconds(3600)))
        // A batch larger than the cap: only its newest rows are kept, and only those are returned.
        let big = try await store.appendRecords((0..<5).map { reading("s", $0) })
        #expect(big.map(\.entry.payload) == (2..<5).map { Array("{\"n\":\($0)}".utf8) })
        #expect(try await store.next(limit: 10) == big)

        // A batch that fits pushes older rows out instead: all of it is returned.
        let small = try await store.appendRecords((5..<7).map { reading("s", $0) })
        #expect(small.count == 2)
        #expect(try await store.next(limit: 10) == [big[2]] + small)

        // A row the age cap removes at once (sampled long ago, first in the batch) is not returned.
        let aged = try await store.appendRecords([
            reading("s", 7, at: Date(timeIntervalSinceNow: -7200)), reading("s", 8), reading("s", 9),
        ])
        #expect(aged.map(\.entry.payload) == (8..<10).map { Array("{\"n\":\($0)}".utf8) })
        let stored = try await store.next(limit: 10)
        #expect(stored == aged)
        #expect(try await store.stats().dropped[.age] == 1)
    }
}
