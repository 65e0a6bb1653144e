import Foundation
import MQTT
import Outbox
import Testing

@testable import Publisher

/// The inbox's wake decisions: when a hand-over must wake the outbox thread now, later, or not at all.
@Suite struct PublisherInboxTests {
    private func submission(_ index: Int) -> PublisherInbox.Submission {
        PublisherInbox.Submission(
            entries: [OutboxEntry(topic: "t/\(index)", payload: [UInt8(index)], sampleTime: Date(), stream: "s")],
            continuation: nil)
    }

    private func outcome(_ id: Int64) -> PublisherInbox.Outcome {
        PublisherInbox.Outcome(id: id, generation: 0, result: .success(()))
    }

    @Test func aSubmissionWakesNowOnceUntilTheDrainTakesIt() {
        let inbox = PublisherInbox(batch: 4)
        #expect(inbox.submit(submission(0)) == .now)
        #expect(inbox.submit(submission(1)) == .none)
        #expect(inbox.report(outcome(1)) == .none)  // the drain already scheduled takes it too
        let taken = inbox.take()
        #expect(taken.submissions.map { $0.entries[0].topic } == ["t/0", "t/1"])
        #expect(taken.outcomes.map(\.id) == [1])
        #expect(inbox.take().submissions.isEmpty)
        #expect(inbox.submit(submission(2)) == .now)  // the next drain is a new wake-up
    }

    @Test func outcomesWakeLaterOnceThenNowWhenABatchGathered() {
        let inbox = PublisherInbox(batch: 3)
        #expect(inbox.report(outcome(1)) == .later)
        #expect(inbox.report(outcome(2)) == .none)  // the timer is already set
        #expect(inbox.report(outcome(3)) == .now)  // a batch gathered
        #expect(inbox.report(outcome(4)) == .none)  // that drain is already scheduled
        #expect(inbox.take().outcomes.map(\.id) == [1, 2, 3, 4])
        // The timer set for the first outcome still runs: nothing is left for it.
        #expect(inbox.timerFired() == false)
        #expect(inbox.report(outcome(5)) == .later)  // after the timer fired a new one may be set
    }

    @Test func aFiredTimerWantsADrainOnlyWhenSomethingWaits() {
        let inbox = PublisherInbox(batch: 10)
        #expect(inbox.report(outcome(1)) == .later)
        #expect(inbox.timerFired() == true)
        #expect(inbox.take().outcomes.map(\.id) == [1])
        #expect(inbox.timerFired() == false)
        // A submission that arrived meanwhile is drained by the timer too.
        #expect(inbox.submit(submission(0)) == .now)
        #expect(inbox.timerFired() == true)
    }

    @Test func urgentOutcomesWakeNow() {
        let inbox = PublisherInbox(batch: 10)
        #expect(inbox.setUrgent(true) == false)  // nothing waits
        #expect(inbox.report(outcome(1)) == .now)
        #expect(inbox.report(outcome(2)) == .none)
        _ = inbox.take()
        #expect(inbox.setUrgent(false) == false)
        #expect(inbox.report(outcome(3)) == .later)
    }

    @Test func becomingUrgentWantsADrainOnlyForWaitingOutcomes() {
        let inbox = PublisherInbox(batch: 10)
        #expect(inbox.report(outcome(1)) == .later)
        #expect(inbox.setUrgent(true) == true)  // the outcome must not wait for the timer
        #expect(inbox.setUrgent(true) == false)  // that drain is scheduled already
        _ = inbox.take()
        #expect(inbox.setUrgent(true) == false)  // no outcome waits

        let submissions = PublisherInbox(batch: 10)
        #expect(submissions.submit(submission(0)) == .now)
        _ = submissions.take()
        #expect(submissions.submit(submission(1)) == .now)
        #expect(submissions.setUrgent(true) == false)  // only a submission waits, and its drain is scheduled
        #expect(submissions.setUrgent(false) == false)

        let calm = PublisherInbox(batch: 10)
        #expect(calm.report(outcome(1)) == .later)
        #expect(calm.setUrgent(false) == false)
    }

    @Test func aBatchBelowOneIsOne() {
        let inbox = PublisherInbox(batch: 0)
        #expect(inbox.report(outcome(1)) == .now)
    }
}
