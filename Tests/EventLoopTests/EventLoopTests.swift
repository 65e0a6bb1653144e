import Foundation
import Synchronization
import Testing
import Timekeeping

@testable import EventLoop

#if canImport(Glibc)
    import Glibc
#endif

/// What ran, in order, and whether each ran on the loop's thread.
private final class Log: Sendable {
    private let entries = Mutex<[(label: String, onLoop: Bool)]>([])
    let loop: EventLoop

    init(_ loop: EventLoop) { self.loop = loop }

    func append(_ label: String) {
        let onLoop = loop.isCurrentThread
        entries.withLock { $0.append((label, onLoop)) }
    }

    var labels: [String] { entries.withLock { $0.map(\.label) } }
    var allOnLoop: Bool { entries.withLock { $0.allSatisfy(\.onLoop) } }
}

/// A value shared with closures that run on the loop's thread.
private final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

/// An actor pinned to a loop.
private actor Pinned {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    private var count = 0

    init(_ loop: EventLoop) { self.loop = loop }

    func record(_ label: String, in log: Log) {
        count += 1
        log.append(label)
    }

    var recorded: Int { count }
}

extension EventLoop {
    /// Returns once the work queued before it has run on the loop's thread.
    fileprivate func barrier() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !execute({ continuation.resume() }) { continuation.resume() }
        }
    }
}

@Suite struct EventLoopTests {
    @Test func timersFireWhenTheManualClockReachesThemAndNotBefore() async throws {
        let clock = ManualClock()
        let loop = try EventLoop(name: "test.timers", clock: clock)
        let log = Log(loop)
        let start = clock.now
        loop.schedule(at: start + .seconds(10)) { log.append("b") }
        loop.schedule(at: start + .seconds(5)) { log.append("a1") }
        loop.schedule(after: .seconds(5)) { log.append("a2") }
        await loop.barrier()
        #expect(log.labels.isEmpty)
        #expect(loop.nextDeadline == start + .seconds(5))
        clock.advance(by: .seconds(4))
        await loop.barrier()
        #expect(log.labels.isEmpty, "a timer fired before its deadline")
        clock.advance(by: .seconds(1))
        await loop.barrier()
        #expect(log.labels == ["a1", "a2"])
        clock.advance(by: .seconds(60))
        await loop.barrier()
        #expect(log.labels == ["a1", "a2", "b"])
        #expect(log.allOnLoop)
        #expect(loop.nextDeadline == nil)
    }

    /// No barrier: moving the clock alone wakes a loop that waits for nothing else. (The test
    /// polls, since anything it queued on the loop would wake it.)
    @Test func movingTheManualClockWakesTheWaitingLoop() async throws {
        let clock = ManualClock()
        let loop = try EventLoop(name: "test.wake", clock: clock)
        let fired = Locked(false)
        loop.schedule(after: .seconds(30)) { fired.withLock { $0 = loop.isCurrentThread } }
        #expect(await poll { loop.core.isIdle }, "the loop never went to wait")
        clock.advance(by: .seconds(30))
        #expect(await poll { fired.withLock { $0 } }, "the timer did not fire after the clock moved")
    }

    /// Polls `condition` every millisecond for at most 10 s of real time.
    private func poll(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    @Test func aCancelledTimerNeverFires() async throws {
        let clock = ManualClock()
        let loop = try EventLoop(name: "test.cancel", clock: clock)
        let log = Log(loop)
        let cancelled = loop.schedule(after: .seconds(1)) { log.append("cancelled") }
        loop.schedule(after: .seconds(2)) { log.append("kept") }
        #expect(cancelled.cancel())
        #expect(!cancelled.cancel())
        clock.advance(by: .seconds(3))
        await loop.barrier()
        #expect(log.labels == ["kept"])
    }

    /// The real clock: a timer set while the loop waits for a later one fires at its own
    /// deadline, not before.
    @Test func onTheRealClockANearerTimerDoesNotWaitForALaterOne() async throws {
        let loop = try EventLoop(name: "test.realtime")
        let far = loop.schedule(after: .seconds(600)) {}
        await loop.barrier()
        let start = ContinuousClock.now
        let firedAt = await withCheckedContinuation {
            (continuation: CheckedContinuation<ContinuousClock.Instant, Never>) in
            loop.schedule(after: .milliseconds(30)) { continuation.resume(returning: .now) }
        }
        #expect(firedAt - start >= .milliseconds(30))
        #expect(far.cancel())
    }

    @Test func closuresAndPinnedActorJobsRunInTheOrderQueuedOnTheLoopThread() async throws {
        let loop = try EventLoop(name: "test.order")
        let log = Log(loop)
        let pinned = Pinned(loop)
        for index in 0..<100 {
            loop.execute { log.append("c\(index)") }
            await pinned.record("j\(index)", in: log)
        }
        await loop.barrier()
        #expect(log.labels == (0..<100).flatMap { ["c\($0)", "j\($0)"] })
        #expect(log.allOnLoop)
        // A closure on the thread may assume the actor's isolation.
        let count = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            loop.execute { continuation.resume(returning: pinned.assumeIsolated { $0.recorded }) }
        }
        #expect(count == 100)
    }

    @Test func workFromManyThreadsKeepsEachThreadsOrder() async throws {
        let loop = try EventLoop(name: "test.threads")
        let seen = Locked<[Int: [Int]]>([:])
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    for value in 0..<500 { loop.execute { seen.withLock { $0[sender, default: []].append(value) } } }
                }
            }
        }
        await loop.barrier()
        let all = seen.withLock { $0 }
        #expect(all.count == 4 && all.values.allSatisfy { $0 == Array(0..<500) })
    }

    @Test func aReadableDescriptorCallsItsHandlerOnTheLoopUntilCancelled() async throws {
        let loop = try EventLoop(name: "test.fd")
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let calls = Locked<[Readiness]>([])
        let (stream, continuation) = AsyncStream.makeStream(of: (Readiness, Bool).self)
        let watch = try #require(
            loop.watch(fd: readEnd, interest: .readable) { readiness in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                calls.withLock { $0.append(readiness) }
                continuation.yield((readiness, loop.isCurrentThread))
            })
        var events = stream.makeAsyncIterator()
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        let first = await events.next()
        #expect(first?.0 == .readable && first?.1 == true)
        // Cancelled on the loop's thread: no call afterwards, even with data waiting.
        loop.execute { watch.cancel() }
        await loop.barrier()
        _ = write(writeEnd, &byte, 1)
        await loop.barrier()
        await loop.barrier()
        #expect(calls.withLock { $0.count } == 1)
        close(writeEnd)
    }

    @Test func aHangUpAndAnUnwatchableDescriptorAreReported() async throws {
        let loop = try EventLoop(name: "test.hangup")
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let (stream, continuation) = AsyncStream.makeStream(of: Readiness.self)
        let watch = loop.watch(fd: ends[0], interest: .readable) { readiness in
            continuation.yield(readiness)
        }
        close(ends[1])
        var events = stream.makeAsyncIterator()
        let hungUp = await events.next()
        #expect(hungUp?.contains(.hangUp) == true)
        loop.execute { watch?.cancel() }
        await loop.barrier()
        close(ends[0])
        // A descriptor epoll refuses (a regular file: EPERM) cannot be watched: one `.error`. Not a
        // closed descriptor: all tests share this process, and another test's open() can take the
        // closed number before the watch (under `make stress` at load 17-21 the watch on the loop's
        // thread then succeeded and `refused` was false).
        var template = Array("/tmp/eventloop-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        #expect(file >= 0)
        unlink(template)
        defer { close(file) }
        let bad = await withCheckedContinuation { (result: CheckedContinuation<Readiness, Never>) in
            _ = loop.watch(fd: file, interest: .readable) { result.resume(returning: $0) }
        }
        #expect(bad == .error)
        // On the loop's thread the refusal is the answer.
        let refused = await withCheckedContinuation { (result: CheckedContinuation<Bool, Never>) in
            loop.execute { result.resume(returning: loop.watch(fd: file, interest: .readable) { _ in } == nil) }
        }
        #expect(refused)
    }

    @Test func writableInterestCanBeTurnedOnAndOff() async throws {
        let loop = try EventLoop(name: "test.writable")
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let fd = ends[0]
        defer {
            close(ends[0])
            close(ends[1])
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Readiness.self)
        let watch = try #require(loop.watch(fd: fd, interest: []) { continuation.yield($0) })
        var events = stream.makeAsyncIterator()
        loop.execute { watch.setInterest(.writable) }
        #expect(await events.next() == .writable)
        loop.execute { watch.setInterest([]) }
        var byte: UInt8 = 1
        _ = write(ends[1], &byte, 1)
        await loop.barrier()
        loop.execute { watch.setInterest(.readable) }
        // Everything yielded between the two is `.writable` (level-triggered), then `.readable`.
        while let next = await events.next(), next != .readable { #expect(next == .writable) }
        loop.execute { watch.cancel() }
        await loop.barrier()
    }

    @Test func shutdownRunsTheQueuedWorkThenStopsAndRefusesMore() async throws {
        let clock = ManualClock()
        let loop = try EventLoop(name: "test.shutdown", clock: clock)
        let log = Log(loop)
        loop.schedule(after: .seconds(1)) { log.append("timer") }
        for index in 0..<3 { loop.execute { log.append("w\(index)") } }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.shutdown { continuation.resume() }
        }
        #expect(log.labels == ["w0", "w1", "w2"])
        #expect(!loop.execute { log.append("late") })
        #expect(!loop.schedule(after: .zero) { log.append("late timer") }.cancel())
        #expect(loop.watch(fd: 0, interest: .readable) { _ in } == nil)
        clock.advance(by: .seconds(2))
        #expect(log.labels == ["w0", "w1", "w2"])
        // A second shutdown finds the loop stopped.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.shutdown { continuation.resume() }
        }
    }

    @Test func releasingTheLoopStopsItsThread() async throws {
        var loop: EventLoop? = try EventLoop(name: "test.release")
        let core = try #require(loop?.core)
        let log = Locked<[String]>([])
        loop?.execute { log.withLock { $0.append("queued") } }
        let stopped = AsyncStream<Void>.makeStream()
        core.whenStopped { stopped.continuation.finish() }
        loop = nil
        for await _ in stopped.stream {}
        #expect(log.withLock { $0 } == ["queued"])
        #expect(!core.enqueue(.closure {}))
    }
}
