import Testing

@testable import Gateway

/// The late answers' patience counts only time this process ran (``LateAnswerPatience``).
@Suite struct LateAnswerPatienceTests {
    let start = ContinuousClock.now

    @Test func givesUpOncePatienceHasPassedWithNoAcknowledgement() {
        var patience = LateAnswerPatience(patience: .seconds(2), start: start)
        // The deadline (5 s) fires on time, 5 s after the start: 2 s more from the last progress.
        #expect(patience.timerFired(due: start + .seconds(5), at: start + .seconds(5)) == .giveUp)
        var acknowledged = LateAnswerPatience(patience: .seconds(2), start: start)
        acknowledged.acknowledged(at: start + .milliseconds(4_500))
        #expect(
            acknowledged.timerFired(due: start + .seconds(5), at: start + .seconds(5))
                == .wait(until: start + .milliseconds(6_500)))
        #expect(
            acknowledged.timerFired(due: start + .milliseconds(6_500), at: start + .milliseconds(6_510)) == .giveUp)
    }

    /// A timer 3 s late: the process was not running, so acknowledgements may be unread; the wait
    /// starts again from the firing instead of giving up.
    @Test func aLateTimerIsAStallOfThisProcessNotOfTheBroker() {
        var patience = LateAnswerPatience(patience: .seconds(2), start: start)
        patience.acknowledged(at: start + .seconds(4))
        let due = start + .seconds(6)
        let fired = due + .seconds(3)
        #expect(patience.timerFired(due: due, at: fired) == .wait(until: fired + .seconds(2)))
        #expect(patience.stalls == 1)
        #expect(patience.largestLateness == .seconds(3))
        // On time afterwards, with nothing acknowledged: it gives up.
        #expect(patience.timerFired(due: fired + .seconds(2), at: fired + .seconds(2)) == .giveUp)
    }

    /// Lateness under the threshold (a busy machine) is not a stall.
    @Test func aSlightlyLateTimerIsNotAStall() {
        var patience = LateAnswerPatience(patience: .seconds(2), start: start)
        #expect(patience.timerFired(due: start + .seconds(5), at: start + .milliseconds(5_300)) == .giveUp)
        #expect(patience.stalls == 0)
    }

    /// A process that never runs on time still stops: at most `maximumStalls` extensions.
    @Test func stallsAreBounded() {
        var patience = LateAnswerPatience(patience: .seconds(2), maximumStalls: 3, start: start)
        var due = start + .seconds(5)
        var decisions: [LateAnswerPatience.Decision] = []
        for _ in 0..<5 {
            let decision = patience.timerFired(due: due, at: due + .seconds(1))
            decisions.append(decision)
            guard case .wait(let until) = decision else { break }
            due = until
        }
        #expect(patience.stalls == 3)
        #expect(decisions.count == 4 && decisions.last == .giveUp)
    }
}
