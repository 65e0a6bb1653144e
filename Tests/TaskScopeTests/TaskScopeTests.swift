import TaskScope
import TestSupport
import Testing
import Timekeeping

@Suite struct TaskScopeTests {
    @Test func closeCancelsEveryChildAndReturnsOnceAllHaveEnded() async {
        let scope = TaskScope()
        let log = Recorded<String>()
        let (events, feed) = AsyncStream.makeStream(of: Int.self)
        let started = Signal()
        let clock = ManualClock()
        scope.spawn {
            started.fire()
            for await event in events { log.append("event \(event)") }
            // Reached only after the last event was handled: the iteration ends on cancellation.
            log.append("loop ended")
        }
        scope.spawn {
            do { try await clock.sleep(for: .seconds(3600)) } catch { log.append("timer cancelled") }
        }
        await started.wait()
        feed.yield(1)
        await clock.sleeping(atLeast: 1)
        #expect(await scope.close(until: .now + .seconds(10)))
        #expect(scope.isClosed)
        // Both ended before close returned (no child left running behind it).
        #expect(Set(log.all.filter { $0 != "event 1" }) == ["loop ended", "timer cancelled"])
    }

    @Test func workSpawnedAfterCloseDoesNotRun() async {
        let scope = TaskScope()
        await scope.close(until: .now + .seconds(10))
        let ran = Signal()
        #expect(!scope.spawn { ran.fire() })
        #expect(scope.spawnCancellable { ran.fire() } == nil)
        #expect(!ran.isFired)
    }

    @Test func closeIsBoundedByItsDeadlineWhenAChildIgnoresCancellation() async {
        let scope = TaskScope()
        let release = Signal()
        let started = Signal()
        scope.spawn {
            started.fire()
            // Ignores cancellation (a call on a frozen peer): waits in a task of its own.
            await Task.detached { await release.wait() }.value
        }
        await started.wait()
        let before = ContinuousClock.now
        #expect(await !scope.close(until: .now + .milliseconds(200)))
        #expect(ContinuousClock.now - before < .seconds(5))
        #expect(!scope.isClosed)
        release.fire()
        #expect(await scope.close(until: .now + .seconds(10)))
    }

    @Test func aCancellableChildEndsByItselfWhileTheOthersRun() async {
        let scope = TaskScope()
        let log = Recorded<String>()
        let clock = ManualClock()
        let timer = scope.spawnCancellable {
            do { try await clock.sleep(for: .seconds(5)) } catch { log.append("timer cancelled") }
        }
        let other = scope.spawnCancellable {
            do { try await clock.sleep(for: .seconds(60)) } catch { log.append("other cancelled") }
        }
        await clock.sleeping(atLeast: 2)
        timer?.cancel()
        await timer?.finished()
        #expect(timer?.isFinished == true)
        #expect(other?.isFinished == false)
        #expect(log.all == ["timer cancelled"])
        #expect(await scope.close(until: .now + .seconds(10)))
        #expect(other?.isFinished == true)
        #expect(log.all == ["timer cancelled", "other cancelled"])
    }

    @Test func finishedCancelsTheChildWhenTheDeadlinePasses() async {
        let scope = TaskScope()
        let clock = ManualClock()
        let workClock = ManualClock()
        let log = Recorded<String>()
        let work = scope.spawnCancellable {
            do { try await workClock.sleep(for: .seconds(3600)) } catch { log.append("cancelled at the deadline") }
        }
        let waiter = Task { await work?.finished(cancellingAt: clock.now + .seconds(3), clock: clock) }
        // The work must have started: a child cancelled before it starts never runs its work (CI,
        // 2026-12-07: the deadline passed first on a loaded pool, and nothing was logged).
        await workClock.sleeping(atLeast: 1)
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(2))
        #expect(work?.isFinished == false)
        clock.advance(by: .seconds(1))
        await waiter.value
        #expect(log.all == ["cancelled at the deadline"])
        await scope.close(until: .now + .seconds(10))
    }

    @Test func aTimerFiresAtItsDeadlineOnTheClockAndNeverOnceCancelled() async {
        let scope = TaskScope()
        let clock = ManualClock()
        let fired = Recorded<String>()
        let timer = scope.spawnTimer(at: clock.now + .seconds(5), clock: clock) { fired.append("due") }
        let cancelled = scope.spawnTimer(at: clock.now + .seconds(5), clock: clock) { fired.append("cancelled") }
        await clock.sleeping(atLeast: 2)
        cancelled?.cancel()
        await cancelled?.finished()
        clock.advance(by: .seconds(4))
        #expect(fired.all.isEmpty)
        clock.advance(by: .seconds(1))
        await timer?.finished()
        #expect(fired.all == ["due"])
        await scope.close(until: .now + .seconds(10))
    }

    /// Work handed to the scope just before it closes still runs (cancelled) and ends, so a caller
    /// awaiting it returns (a closing scope that dropped its queued work would leave them waiting).
    @Test(.timeLimit(.minutes(1))) func workQueuedWhenTheScopeClosesStillEnds() async {
        let scope = TaskScope()
        let tasks = (0..<1000).compactMap { _ in scope.spawnCancellable { await Task.yield() } }
        let values = (0..<1000).compactMap { index in scope.spawnValue { index } }
        #expect(tasks.count == 1000 && values.count == 1000)
        #expect(await scope.close(until: .now + .seconds(30)))
        for task in tasks { await task.finished() }
        for (index, value) in values.enumerated() { #expect(await value.value == index) }
    }

    @Test func aValueChildIsAwaitedByEveryCallerAndEndsWithTheScope() async {
        let scope = TaskScope()
        let release = Signal()
        let runs = Recorded<String>()
        guard
            let probe = scope.spawnValue({ () -> Int in
                runs.append("ran")
                await release.wait()
                return 42
            })
        else {
            Issue.record("an open scope refused a child")
            return
        }
        // Two callers join the one run.
        async let first = probe.value
        async let second = probe.value
        release.fire()
        #expect(await first == 42)
        #expect(await second == 42)
        #expect(runs.all == ["ran"])
        // A value child still running when the scope closes is cancelled and awaited with the others.
        let blocked = scope.spawnValue { () -> Bool in
            (try? await ContinuousClock().sleep(for: .seconds(3600))) != nil
        }
        #expect(await scope.close(until: .now + .seconds(10)))
        #expect(await blocked?.value == false)
        #expect(scope.spawnValue { 1 } == nil)
    }

    /// `value` stops waiting when its caller is cancelled; `outcome` waits for the work's end
    /// (the pairing agent's owner of a `Pair` call keeps its session until the call is over).
    @Test(.timeLimit(.minutes(1))) func outcomeWaitsForTheWorkWhenTheCallerIsCancelled() async {
        let scope = TaskScope()
        let started = Signal()
        let release = Signal()
        guard
            let work = scope.spawnValue({ () -> Int in
                started.fire()
                // Ignores its cancellation: waits in a task of its own.
                await Task.detached { await release.wait() }.value
                return 7
            })
        else {
            Issue.record("an open scope refused a child")
            return
        }
        await started.wait()
        let impatient = Task { await work.value }
        impatient.cancel()
        #expect(await impatient.value == nil)
        let owner = Task { await work.outcome }
        owner.cancel()
        let ended = Signal()
        let watcher = Task {
            let value = await owner.value
            ended.fire()
            return value
        }
        // The owner is cancelled and still waits: the work has not returned.
        await Task.yield()
        #expect(!ended.isFired)
        release.fire()
        #expect(await watcher.value == 7)
        await scope.close(until: .now + .seconds(10))
    }

    @Test func aSignalReleasesEveryWaiterAndLaterOnesAtOnce() async {
        let signal = Signal()
        let log = Recorded<String>()
        let waiters = (0..<3).map { index in
            Task {
                await signal.wait()
                log.append("waiter \(index)")
            }
        }
        signal.fire()
        for waiter in waiters { await waiter.value }
        await signal.wait()
        #expect(log.all.count == 3)
        // A cancelled wait returns without the signal.
        let other = Signal()
        let cancelled = Task { await other.wait() }
        cancelled.cancel()
        await cancelled.value
        #expect(!other.isFired)
    }
}
