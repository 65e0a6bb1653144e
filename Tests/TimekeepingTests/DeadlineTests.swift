import TestSupport
import Testing
import Timekeeping

@Suite struct DeadlineTests {
    @Test func afterFiresOnceItsDurationHasPassedOnTheClock() async {
        let clock = ManualClock()
        let fired = Recorded<String>()
        let timer = Deadline.after(.seconds(30), clock: clock) { fired.append("timeout") }
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(29))
        #expect(fired.all.isEmpty)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        await timer.value
        #expect(fired.all == ["timeout"])
    }

    @Test func afterNeverFiresOnceCancelled() async {
        let clock = ManualClock()
        let fired = Recorded<String>()
        let timer = Deadline.after(.seconds(30), clock: clock) { fired.append("timeout") }
        await clock.sleeping(atLeast: 1)
        timer.cancel()
        await timer.value
        clock.advance(by: .seconds(60))
        #expect(fired.all.isEmpty)
        #expect(clock.sleeperCount == 0)
    }

    @Test func valueCancelsTheTaskWhenTheDeadlinePasses() async {
        let clock = ManualClock()
        let deadline = clock.now + .seconds(3)
        let work = Task { () -> String in
            // Ends only when cancelled (a publish the broker never acknowledges).
            let never = ManualClock()
            do {
                try await never.sleep(for: .seconds(3600))
                return "finished"
            } catch {
                return "cancelled"
            }
        }
        let waiter = Task { await Deadline.value(of: work, cancellingAt: deadline, clock: clock) }
        // The deadline's timer and the work both sleep before the time moves.
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(2))
        clock.advance(by: .seconds(1))
        #expect(await waiter.value == "cancelled")
    }

    @Test func valueReturnsTheWorksOwnResultBeforeTheDeadline() async {
        let clock = ManualClock()
        let work = Task { 42 }
        #expect(await Deadline.value(of: work, cancellingAt: clock.now + .seconds(1), clock: clock) == 42)
        // The timer went with it: nothing left asleep on the clock.
        #expect(clock.sleeperCount == 0)
    }

    @Test func allCancelsOnlyThoseStillRunning() async {
        let clock = ManualClock()
        let ended = Recorded<String>()
        let quick = Task { ended.append("quick") }
        let slow = Task {
            try? await ManualClock().sleep(for: .seconds(3600))
            ended.append(Task.isCancelled ? "slow cancelled" : "slow")
        }
        let waiter = Task { await Deadline.all([quick, slow], cancellingAt: clock.now + .seconds(5), clock: clock) }
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(5))
        await waiter.value
        #expect(Set(ended.all) == ["quick", "slow cancelled"])
    }

    @Test func runStopsWaitingForWorkThatIgnoresCancellation() async {
        let clock = ManualClock()
        let elsewhere = ManualClock()
        // Awaiting another task's value ignores the waiter's cancellation.
        let stuck = Task { try? await elsewhere.sleep(for: .seconds(3600)) }
        let waiter = Task { await Deadline.run(until: clock.now + .seconds(2), clock: clock) { await stuck.value } }
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(2))
        await waiter.value
        #expect(elsewhere.sleeperCount == 1)
        stuck.cancel()
    }

    @Test func runReturnsAsSoonAsTheWorkEnds() async {
        let clock = ManualClock()
        // The clock never moves: only the work's end can let the run return.
        await Deadline.run(until: clock.now + .seconds(3600), clock: clock) {}
        #expect(clock.sleeperCount == 0)
    }

    @Test func runCancelsTheWorkAtTheDeadline() async {
        let clock = ManualClock()
        let elsewhere = ManualClock()
        let (outcomes, outcome) = AsyncStream.makeStream(of: String.self)
        let waiter = Task {
            await Deadline.run(until: clock.now + .seconds(1), clock: clock) {
                do {
                    try await elsewhere.sleep(for: .seconds(60))
                    outcome.yield("slept")
                } catch {
                    outcome.yield("cancelled")
                }
            }
        }
        await clock.sleeping(atLeast: 1)
        await elsewhere.sleeping(atLeast: 1)
        clock.advance(by: .seconds(1))
        await waiter.value
        var iterator = outcomes.makeAsyncIterator()
        #expect(await iterator.next() == "cancelled")
    }

    @Test func runEndsWhenTheCallerIsCancelled() async {
        let clock = ManualClock()
        let elsewhere = ManualClock()
        let stuck = Task { try? await elsewhere.sleep(for: .seconds(3600)) }
        let waiter = Task { await Deadline.run(until: clock.now + .seconds(60), clock: clock) { await stuck.value } }
        await clock.sleeping(atLeast: 1)
        waiter.cancel()
        await waiter.value
        #expect(elsewhere.sleeperCount == 1)
        stuck.cancel()
    }
}
