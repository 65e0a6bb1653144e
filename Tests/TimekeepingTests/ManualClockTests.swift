import Foundation
import TestSupport
import Testing
import Timekeeping

@Suite struct ManualClockTests {
    @Test func sleepersWakeOnlyWhenTheTimePassesTheirDeadline() async {
        let clock = ManualClock()
        let woke = Recorded<Int>()
        let start = clock.now
        let first = Task {
            try? await clock.sleep(until: start + .seconds(5), tolerance: nil)
            woke.append(5)
        }
        let second = Task {
            try? await clock.sleep(until: start + .seconds(2), tolerance: nil)
            woke.append(2)
        }
        await clock.sleeping(atLeast: 2)
        clock.advance(by: .seconds(1))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(1))
        await second.value
        #expect(woke.all == [2])
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(3))
        await first.value
        #expect(woke.all == [2, 5])
    }

    @Test func aDeadlineAlreadyPassedReturnsAtOnce() async throws {
        let clock = ManualClock()
        try await clock.sleep(until: clock.now, tolerance: nil)
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellationEndsTheSleepWithAnError() async {
        let clock = ManualClock()
        let sleeper = Task { () -> Bool in
            do {
                try await clock.sleep(for: .seconds(60))
                return false
            } catch {
                return error is CancellationError
            }
        }
        await clock.sleeping(atLeast: 1)
        sleeper.cancel()
        #expect(await sleeper.value)
        #expect(clock.sleeperCount == 0)
    }

    @Test func theDateMovesWithTheInstant() {
        let clock = ManualClock()
        let date = clock.date
        let instant = clock.now
        clock.advance(by: .milliseconds(1500))
        #expect(clock.now - instant == .milliseconds(1500))
        #expect(abs(clock.date.timeIntervalSince(date) - 1.5) < 1e-6)
    }

    @Test func waitingForSleepersEndsWhenCancelled() async {
        let clock = ManualClock()
        let waiter = Task { await clock.sleeping(atLeast: 1) }
        waiter.cancel()
        await waiter.value
        #expect(clock.sleeperCount == 0)
    }
}
