import TaskScope
import TestSupport
import Testing
import Timekeeping

/// A scope whose group runs in the task that hosts it (`Gateway.run()`'s shape, issue 20).
@Suite struct HostedTaskScopeTests {
    @Test func workSpawnedBeforeTheHostRunsInItAndCloseEndsTheHost() async {
        let scope = TaskScope.hostedByCaller()
        let clock = ManualClock()
        let log = Recorded<String>()
        let started = Signal()
        #expect(
            scope.spawn {
                started.fire()
                do { try await clock.sleep(for: .seconds(3600)) } catch { log.append("cancelled by the close") }
            })
        let host = Task { await scope.host() }
        await started.wait()
        await clock.sleeping(atLeast: 1)
        #expect(!scope.isClosed)
        #expect(await scope.close(until: .now + .seconds(10)))
        await host.value
        #expect(log.all == ["cancelled by the close"])
        #expect(!scope.spawn { log.append("ran after the close") })
    }

    /// The children are the hosting task's: cancelling it cancels them, and the scope ends with it.
    @Test func cancellingTheHostCancelsTheChildrenAndClosesTheScope() async {
        let scope = TaskScope.hostedByCaller()
        let clock = ManualClock()
        let log = Recorded<String>()
        let started = Signal()
        let host = Task { await scope.host() }
        scope.spawn {
            started.fire()
            do { try await clock.sleep(for: .seconds(3600)) } catch { log.append("cancelled with the host") }
        }
        await started.wait()
        await clock.sleeping(atLeast: 1)
        host.cancel()
        await host.value
        #expect(log.all == ["cancelled with the host"])
        #expect(scope.isClosed)
        #expect(!scope.isOpen)
        #expect(!scope.spawn { log.append("ran after the host ended") })
    }

    @Test func onlyTheFirstHostRunsTheGroup() async {
        let scope = TaskScope.hostedByCaller()
        let first = Task { await scope.host() }
        let started = Signal()
        scope.spawn { started.fire() }
        await started.wait()
        // A second host returns at once and leaves the group to the first.
        await scope.host()
        #expect(!scope.isClosed)
        #expect(await scope.close(until: .now + .seconds(10)))
        await first.value
        // A scope with a task of its own needs no host: host() returns at once.
        let own = TaskScope()
        await own.host()
        #expect(own.isOpen)
        await own.close(until: .now + .seconds(10))
    }

    /// A stop before the run (a SIGTERM while the gateway is made): the close returns at once, and
    /// the work queued meanwhile runs cancelled, so whoever awaits it returns.
    @Test(.timeLimit(.minutes(1))) func closingAScopeNobodyHostedEndsItsQueuedWork() async {
        let scope = TaskScope.hostedByCaller()
        // Many, so that the first would run while the close still adds the last, were they not
        // started cancelled.
        let values = (0..<500).compactMap { _ in scope.spawnValue { Task.isCancelled ? "cancelled" : "ran" } }
        let before = ContinuousClock.now
        #expect(await scope.close(until: .now + .seconds(30)))
        #expect(ContinuousClock.now - before < .seconds(10))
        var outcomes: [String: Int] = [:]
        for value in values { outcomes[await value.value ?? "never started", default: 0] += 1 }
        #expect(outcomes == ["cancelled": 500])
        #expect(scope.isClosed)
        // Nothing is left to host.
        await scope.host()
    }
}
