import TaskScope
import TestSupport
import Testing
import Timekeeping

@Suite struct WakeUpTests {
    @Test func armsOnceForAnInstantAndFiresWhenItPasses() async {
        let clock = ManualClock()
        let scope = TaskScope()
        let fired = Recorded<Int>()
        var wakeUp = WakeUp()
        let deadline = clock.now + .seconds(5)
        wakeUp.arm(at: deadline, clock: clock, in: scope) { fired.append(1) }
        // Re-armed for the same instant after every event: still one timer.
        wakeUp.arm(at: deadline, clock: clock, in: scope) { fired.append(2) }
        await clock.sleeping(atLeast: 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(4))
        #expect(fired.all.isEmpty)
        clock.advance(by: .seconds(1))
        while fired.all.isEmpty { await Task.yield() }
        #expect(fired.all == [1])
        wakeUp.fired()
        #expect(wakeUp.deadline == nil)
    }

    @Test func aMovedDeadlineReplacesTheTimerAndNilDisarmsIt() async {
        let clock = ManualClock()
        let scope = TaskScope()
        let fired = Recorded<String>()
        var wakeUp = WakeUp()
        wakeUp.arm(at: clock.now + .seconds(10), clock: clock, in: scope) { fired.append("late") }
        wakeUp.arm(at: clock.now + .seconds(2), clock: clock, in: scope) { fired.append("early") }
        #expect(wakeUp.deadline == clock.now + .seconds(2))
        await clock.sleeping(atLeast: 1)
        clock.advance(by: .seconds(2))
        while fired.all.isEmpty { await Task.yield() }
        wakeUp.fired()
        wakeUp.arm(at: clock.now + .seconds(3), clock: clock, in: scope) { fired.append("disarmed") }
        await clock.sleeping(atLeast: 1)
        wakeUp.arm(at: nil, clock: clock, in: scope) { fired.append("never") }
        while clock.sleeperCount > 0 { await Task.yield() }
        clock.advance(by: .seconds(60))
        #expect(fired.all == ["early"])
    }
}
