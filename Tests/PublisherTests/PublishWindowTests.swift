import Foundation
import Outbox
import Testing

@testable import Publisher

@Suite struct PublishWindowTests {
    let t0 = ContinuousClock.now

    private func records(_ ids: ClosedRange<Int64>) -> [OutboxRecord] {
        ids.map {
            OutboxRecord(
                id: $0,
                entry: OutboxEntry(
                    topic: "t", payload: [UInt8($0 & 0xFF)], sampleTime: Date(timeIntervalSince1970: Double($0)),
                    stream: "dev"),
                enqueuedAt: Date(timeIntervalSince1970: 0))
        }
    }

    /// A connected window whose first read returned `ids`.
    private func connected(capacity: Int, publishing ids: ClosedRange<Int64>) -> PublishWindow {
        var window = PublishWindow(capacity: capacity, removalBatch: max(1, capacity / 4), stallTimeout: .seconds(30))
        _ = window.connectionChanged(connected: true, now: t0)
        _ = window.fetched(records(ids), limit: capacity, read: 1, now: t0)
        return window
    }

    @Test func nothingHappensUntilConnected() {
        var window = PublishWindow(capacity: 4, removalBatch: 1)
        #expect(window.appended([], now: t0).isEmpty)
        #expect(window.connectionChanged(connected: true, now: t0) == [.fetch(after: 0, limit: 4, read: 1)])
    }

    @Test func fillsTheWindowInOrderAndNeverBeyondIt() {
        var window = PublishWindow(capacity: 4, removalBatch: 1)
        _ = window.connectionChanged(connected: true, now: t0)
        #expect(window.appended([], now: t0).isEmpty)  // a read is already outstanding
        #expect(window.fetched(records(1...4), limit: 4, read: 1, now: t0) == [.publish(records(1...4), generation: 0)])
        #expect(window.inFlight == [1, 2, 3, 4])
        #expect(window.appended([], now: t0).isEmpty)  // window full
        // One acknowledgement frees one slot and starts one removal.
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.remove([1]), .fetch(after: 4, limit: 1, read: 2)])
        #expect(window.fetched(records(5...5), limit: 1, read: 2, now: t0) == [.publish(records(5...5), generation: 0)])
    }

    @Test func acknowledgementsAreDeletedInBatches() {
        var window = connected(capacity: 8, publishing: 1...3)  // a short read: nothing more for now
        // Deletions wait for a removal batch (2 rows here), or for the removal delay.
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.removeLater])
        #expect(window.acknowledged(2, generation: 0, now: t0) == [.remove([1, 2])])
        // One removal at a time; the last acknowledgement waits for it and for the delay.
        #expect(window.acknowledged(3, generation: 0, now: t0).isEmpty)
        #expect(window.removed([1, 2]).isEmpty)  // the delay asked for above has not passed
        #expect(!window.isIdle)
        #expect(window.removalDelayElapsed() == [.remove([3])])
        #expect(window.removed([3]).isEmpty)
        #expect(window.isIdle)
    }

    /// The batch is its own setting, not a share of the window: many acknowledgements in flight
    /// or few, deletions wait until it gathered (or for the delay).
    @Test func aRemovalBatchLargerThanTheWindowGathersAcrossRefills() {
        var window = PublishWindow(capacity: 2, removalBatch: 3)
        _ = window.connectionChanged(connected: true, now: t0)
        #expect(window.fetched(records(1...2), limit: 2, read: 1, now: t0) == [.publish(records(1...2), generation: 0)])
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.removeLater, .fetch(after: 2, limit: 1, read: 2)])
        #expect(window.fetched(records(3...3), limit: 1, read: 2, now: t0) == [.publish(records(3...3), generation: 0)])
        #expect(window.acknowledged(2, generation: 0, now: t0) == [.fetch(after: 3, limit: 1, read: 3)])
        #expect(window.fetched([], limit: 1, read: 3, now: t0).isEmpty)
        #expect(window.acknowledged(3, generation: 0, now: t0) == [.remove([1, 2, 3])])
        #expect(window.removed([1, 2, 3]).isEmpty)
        #expect(window.isIdle)
    }

    /// Without a deletion due, a commit takes the acknowledged rows once the oldest waited
    /// `foldAfter`: at low rates they would otherwise wait for the removal delay and a transaction
    /// of their own.
    @Test func acknowledgementsThatWaitedJoinACommitBeforeTheirBatchIsDue() {
        var window = PublishWindow(capacity: 8, removalBatch: 256, foldAfter: .milliseconds(20))
        _ = window.connectionChanged(connected: true, now: t0)
        _ = window.fetched(records(1...3), limit: 8, read: 1, now: t0)
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.removeLater])
        #expect(window.acknowledged(2, generation: 0, now: t0 + .milliseconds(15)).isEmpty)
        #expect(window.removalsJoiningCommit(now: t0 + .milliseconds(19)).isEmpty)  // the oldest waited 19 ms
        #expect(window.removalsJoiningCommit(now: t0 + .milliseconds(20)) == [1, 2])
        #expect(window.removalsJoiningCommit(now: t0 + .milliseconds(40)).isEmpty)
        // Acknowledged meanwhile: waits for the commit's deletion, then for its own time.
        #expect(window.acknowledged(3, generation: 0, now: t0 + .milliseconds(21)).isEmpty)
        #expect(window.removed([1, 2]).isEmpty)  // the delay asked for above has not passed
        #expect(window.removalsJoiningCommit(now: t0 + .milliseconds(40)).isEmpty)
        #expect(window.removalsJoiningCommit(now: t0 + .milliseconds(41)) == [3])
        #expect(window.removed([3]).isEmpty)
        #expect(window.removalDelayElapsed().isEmpty)  // nothing left for the timer
        #expect(window.isIdle)
    }

    /// The driver runs a due deletion in the transaction of a commit: the acknowledgements that
    /// came after it join it then, instead of waiting to be the next deletion.
    @Test func acknowledgementsJoinADeletionHandedToACommit() {
        var window = connected(capacity: 8, publishing: 1...5)
        #expect(window.removalsJoiningCommit(now: t0).isEmpty)  // nothing acknowledged
        _ = window.acknowledged(1, generation: 0, now: t0)
        #expect(window.removalsJoiningCommit(now: t0).isEmpty)  // no deletion due, and the row has not waited: it waits
        #expect(window.acknowledged(2, generation: 0, now: t0).contains(.remove([1, 2])))
        #expect(window.acknowledged(3, generation: 0, now: t0).isEmpty)
        #expect(window.acknowledged(4, generation: 0, now: t0).isEmpty)
        #expect(window.removalsJoiningCommit(now: t0) == [3, 4])
        #expect(window.removalsJoiningCommit(now: t0).isEmpty)
        // They come back together; nothing is left to delete.
        #expect(window.removed([1, 2, 3, 4]).isEmpty)
        _ = window.acknowledged(5, generation: 0, now: t0)
        #expect(window.removalDelayElapsed() == [.remove([5])])
        // A commit that failed hands every id back: retried together after the pause.
        #expect(window.removeFailed([5]) == [.retryRemovalLater])
        #expect(window.removalsJoiningCommit(now: t0).isEmpty)  // not while the retry waits
        #expect(window.removalRetryDue() == [.remove([5])])
    }

    @Test func anIdleWindowDeletesAfterTheRemovalDelay() {
        var window = connected(capacity: 64, publishing: 1...1)
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.removeLater])
        #expect(window.removalDelayElapsed() == [.remove([1])])
        #expect(window.removalDelayElapsed().isEmpty)  // nothing gathered since
    }

    @Test func aDisconnectDeletesWhatWasAcknowledgedAtOnce() {
        var window = connected(capacity: 64, publishing: 1...2)
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.removeLater])
        #expect(window.connectionChanged(connected: false, now: t0) == [.remove([1])])
    }

    @Test func appendedRowsAreHandedOutAtOnceWhenTheWindowIsCaughtUp() {
        var window = connected(capacity: 4, publishing: 1...2)  // a short read: caught up
        // The live tail: no read back.
        #expect(window.appended(records(3...3), now: t0) == [.publish(records(3...3), generation: 0)])
        #expect(window.inFlight == [1, 2, 3])
        // More than fits: what fits goes out, the rest is read later in order.
        #expect(window.appended(records(4...6), now: t0) == [.publish(records(4...4), generation: 0)])
        #expect(window.hasBacklog)
        #expect(
            window.acknowledged(1, generation: 0, now: t0) == [.remove([1]), .fetch(after: 4, limit: 1, read: 2)])
    }

    /// A spilled reading whose memory publish the broker acknowledged after the spill: its row is
    /// deleted unsent when the window had not handed it out, and skipped by the reads meanwhile; a
    /// row already handed out is left to its own outcome.
    @Test func aRowAcknowledgedBeforeItsHandOutIsDeletedUnsent() {
        var window = connected(capacity: 2, publishing: 1...1)  // a short read: caught up, row 1 in flight
        // The spill's rows 2...4: the live tail hands out row 2 (the room left); 3 and 4 wait.
        #expect(window.appended(records(2...4), now: t0) == [.publish(records(2...2), generation: 0)])
        #expect(window.acknowledgedUnsent(2, now: t0) == nil)
        #expect(window.acknowledgedUnsent(3, now: t0) == [.remove([3])])
        #expect(window.acknowledgedUnsent(3, now: t0) == nil)
        // Room again: the read returns row 3 (its deletion is not done yet), which is skipped.
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.fetch(after: 2, limit: 1, read: 2)])
        #expect(window.fetched(records(3...3), limit: 1, read: 2, now: t0) == [.fetch(after: 3, limit: 1, read: 3)])
        #expect(window.fetched(records(4...4), limit: 1, read: 3, now: t0) == [.publish(records(4...4), generation: 0)])
        #expect(window.inFlight == [2, 4])
    }

    @Test func appendedRowsWaitBehindUnreadRows() {
        var window = PublishWindow(capacity: 4, removalBatch: 1)
        // Not connected: nothing is handed out, and the rows must be read later.
        #expect(window.appended(records(1...1), now: t0).isEmpty)
        #expect(window.connectionChanged(connected: true, now: t0) == [.fetch(after: 0, limit: 4, read: 1)])
        // A read is outstanding: a new row is not handed out ahead of it.
        #expect(window.appended(records(2...2), now: t0).isEmpty)
        #expect(
            window.fetched(records(1...2), limit: 4, read: 1, now: t0) == [
                .publish(records(1...2), generation: 0), .fetch(after: 2, limit: 2, read: 2),
            ])
    }

    @Test func aShortReadStopsReadingUntilSomethingIsAppended() {
        var window = connected(capacity: 8, publishing: 1...2)
        #expect(window.appended([], now: t0) == [.fetch(after: 2, limit: 6, read: 2)])
    }

    @Test func anAppendDuringAReadIsNotMissed() {
        var window = PublishWindow(capacity: 8, removalBatch: 2)
        _ = window.connectionChanged(connected: true, now: t0)
        #expect(window.appended([], now: t0).isEmpty)  // read 1 is outstanding; it may not see this row
        // Read 1 comes back short, but a row was appended after it was issued: read again.
        #expect(
            window.fetched(records(1...1), limit: 8, read: 1, now: t0) == [
                .publish(records(1...1), generation: 0), .fetch(after: 1, limit: 7, read: 2),
            ])
    }

    @Test func aDisconnectKeepsWhatIsInFlightAndContinuesAfterIt() {
        var window = connected(capacity: 4, publishing: 1...4)
        #expect(window.connectionChanged(connected: false, now: t0).isEmpty)
        #expect(window.inFlight == [1, 2, 3, 4])  // the MQTT client re-sends these itself
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.remove([1])])  // no read while down
        #expect(window.appended([], now: t0).isEmpty)
        #expect(window.connectionChanged(connected: true, now: t0) == [.fetch(after: 4, limit: 1, read: 2)])
    }

    @Test func aConnectionFailureReplaysFromTheOldestUnacknowledgedRow() {
        var window = connected(capacity: 4, publishing: 1...4)
        _ = window.acknowledged(1, generation: 0, now: t0)  // its deletion is under way
        #expect(window.failedTransiently(3, generation: 0) == [.resumeLater])
        #expect(window.inFlight.isEmpty)
        // Late results of the old generation: an acknowledgement still counts, a failure does not.
        #expect(window.acknowledged(2, generation: 0, now: t0).isEmpty)
        #expect(window.failedTransiently(4, generation: 0).isEmpty)
        #expect(window.appended([], now: t0).isEmpty)  // paused
        #expect(window.resume() == [.fetch(after: 0, limit: 4, read: 3)])
        // 1 and 2 are still in the outbox (deletions pending): skipped, not sent again.
        #expect(
            window.fetched(records(1...4), limit: 4, read: 3, now: t0) == [
                .publish(records(3...4), generation: 1), .fetch(after: 4, limit: 2, read: 4),
            ])
        #expect(window.inFlight == [3, 4])
    }

    @Test func aStaleReadIsIgnored() {
        var window = PublishWindow(capacity: 4, removalBatch: 1)
        _ = window.connectionChanged(connected: true, now: t0)
        _ = window.connectionChanged(connected: false, now: t0)
        #expect(window.connectionChanged(connected: true, now: t0) == [.fetch(after: 0, limit: 4, read: 2)])
        #expect(window.fetched(records(1...4), limit: 4, read: 1, now: t0).isEmpty)
        #expect(window.inFlight.isEmpty)
    }

    @Test func aStalledWindowIsSentAgainFromTheOldestUnacknowledgedRow() {
        var window = connected(capacity: 4, publishing: 1...4)
        #expect(window.stallDeadline == t0 + .seconds(30))
        #expect(window.tick(now: t0 + .seconds(29)).isEmpty)
        _ = window.acknowledged(1, generation: 0, now: t0 + .seconds(29))
        #expect(window.stallDeadline == t0 + .seconds(59))  // the acknowledgement was progress
        #expect(window.tick(now: t0 + .seconds(58)).isEmpty)
        #expect(window.tick(now: t0 + .seconds(59)) == [.fetch(after: 0, limit: 4, read: 3)])
        #expect(window.generation == 1)
        #expect(window.stallDeadline == nil)  // nothing in flight until the fetch comes back
    }

    /// The publisher arms its stall timer for `stallDeadline`: none while nothing can stall.
    @Test func nothingCanStallWhileDisconnectedOrWithNothingInFlight() {
        var window = PublishWindow(capacity: 4, removalBatch: 1, stallTimeout: .seconds(30))
        #expect(window.stallDeadline == nil)
        _ = window.connectionChanged(connected: true, now: t0)
        #expect(window.stallDeadline == nil)
        window = connected(capacity: 4, publishing: 1...4)
        #expect(window.stallDeadline != nil)
        _ = window.connectionChanged(connected: false, now: t0 + .seconds(1))
        #expect(window.stallDeadline == nil)
    }

    @Test func aPermanentRefusalDiscardsTheRowAndMovesOn() {
        var window = connected(capacity: 2, publishing: 1...2)
        #expect(window.failedPermanently(1, generation: 0) == [.discard([1]), .fetch(after: 2, limit: 1, read: 2)])
        #expect(window.discarded([1]).isEmpty)
        #expect(window.acknowledged.isEmpty)
    }

    @Test func aFailedRemovalIsRetriedWithTheNextBatchAfterAPause() {
        var window = connected(capacity: 4, publishing: 1...2)
        _ = window.acknowledged(1, generation: 0, now: t0)
        _ = window.acknowledged(2, generation: 0, now: t0)
        #expect(window.removeFailed([1]) == [.retryRemovalLater])
        #expect(window.removalRetryDue() == [.remove([1, 2])])
    }

    /// Issue 19, D1: deletions failing on a full disk paused the window, throttling the drain to a
    /// few readings a second; publishing now goes on and the deletion waits for its retry.
    @Test func aFailedRemovalDoesNotStopPublishing() {
        var window = connected(capacity: 4, publishing: 1...4)
        #expect(window.acknowledged(1, generation: 0, now: t0) == [.remove([1]), .fetch(after: 4, limit: 1, read: 2)])
        #expect(window.removeFailed([1]) == [.retryRemovalLater])
        // The read goes on and its rows are published while the deletion waits.
        #expect(window.fetched(records(5...5), limit: 1, read: 2, now: t0) == [.publish(records(5...5), generation: 0)])
        #expect(window.acknowledged(2, generation: 0, now: t0) == [.fetch(after: 5, limit: 1, read: 3)])
        #expect(window.removalRetryDue() == [.remove([1, 2])])
    }
}
