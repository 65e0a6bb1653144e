import Foundation
import Synchronization
import TaskPool
import TestSupport
import Testing
import Timekeeping

/// `TaskPool` as the gateway uses it: installed in a process of its own (the pool replaces the
/// whole process's global executor), so each test re-runs itself in a child of this test binary.
@Suite struct TaskPoolTests {
    static func currentThreadName() -> String {
        let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    static func inOwnProcess(_ test: String) async throws -> Bool {
        guard OwnProcess.isChild else {
            let child = try await OwnProcess.run(filter: "TaskPoolTests/\(test)", timeout: .seconds(100))
            #expect(child.status == 0, "\(child.stdout)\n\(child.stderr)")
            return false
        }
        #expect(TaskPool.install(threads: 2))
        return true
    }

    /// libdispatch's pool adds a worker when, at its once-a-second look, work is queued and its
    /// workers are not runnable (a lock wait is enough; here every worker sleeps in `usleep` for
    /// 3 s, standing in for such waits, while another thread starts tasks). The pool keeps its two threads, and libdispatch starts
    /// none: its queue has no work. (Without `install` this process gains workers.)
    @Test func everyWorkerWaitingAddsNoThread() async throws {
        guard try await Self.inOwnProcess("everyWorkerWaitingAddsNoThread()") else { return }
        // Let libdispatch's workers of the test runner's start go idle and settle.
        try await SystemClock().sleep(for: .seconds(1))
        let before = ThreadNames.of()
        // More sleepers than there are workers of either pool, so that all of them wait at once.
        let sleepers = max(4, before["oot.default-qos", default: 0] + 2)
        // Every worker blocked (deliberately: `usleep` stands in for lock waits), while another
        // thread keeps starting tasks, as the gateway's D-Bus and notify threads resume its tasks.
        let feeding = FeederFlags()
        let feeder = Thread {
            // Not the name it inherits from the pool thread that started it.
            try? "feeder".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            while !feeding.stop.load(ordering: .acquiring) {
                Task { _ = index(of: feeding) }
                usleep(10_000)
            }
        }
        feeder.start()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<sleepers {
                group.addTask { usleep(3_000_000) }
            }
        }
        let after = ThreadNames.of()
        feeding.stop.store(true, ordering: .releasing)
        #expect(after["blebridge.pool"] == 2, "\(after)")
        #expect(
            after["oot.default-qos", default: 0] <= before["oot.default-qos", default: 0],
            "libdispatch started workers: before \(before), after \(after)")
    }

    /// Tasks resume on the pool's threads after a `SystemClock` sleep (the timer thread's
    /// callback), which lasts at least its duration; a cancelled sleep ends at once.
    @Test func sleepsResumeOnThePoolAndEndWhenCancelled() async throws {
        guard try await Self.inOwnProcess("sleepsResumeOnThePoolAndEndWhenCancelled()") else { return }
        let clock = SystemClock()
        let fired = TaskPool.timersFired
        let start = ContinuousClock.now
        try await clock.sleep(for: .milliseconds(50))
        let slept = ContinuousClock.now - start
        #expect(slept >= .milliseconds(50) && slept < .seconds(5), "\(slept)")
        #expect(TaskPool.timersFired > fired)
        #expect(Self.currentThreadName() == TaskPool.threadName)

        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        try await clock.sleep(for: .milliseconds(20))
        let cancelledAt = ContinuousClock.now
        sleeper.cancel()
        let result = await sleeper.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(5))
        #expect(throws: CancellationError.self) { try result.get() }

        // Cancelled before it started: throws without sleeping.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        let earlyResult = await early.result
        #expect(throws: CancellationError.self) { try earlyResult.get() }

        // The runtime's own sleeps (through the pool's delay and deadline hooks up to Swift 6.1;
        // libdispatch's timer from 6.2) still end.
        let runtimeStart = ContinuousClock.now
        try await Task.sleep(nanoseconds: 30_000_000)
        try await ContinuousClock().sleep(for: .milliseconds(30))
        #expect(ContinuousClock.now - runtimeStart >= .milliseconds(60))
        #expect(TaskPool.jobsRun > 0)
    }
}

/// Tells `TaskPoolTests`' feeder thread to stop.
final class FeederFlags: Sendable {
    let stop = Atomic<Bool>(false)
}

private func index(of flags: FeederFlags) -> Int { ObjectIdentifier(flags).hashValue }
