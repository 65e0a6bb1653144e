import Foundation
import Outbox
import Testing

@testable import Publisher

@Suite struct PublishWindowTests {
    private func records(_ ids: ClosedRange<Int64>, stream: String = "dev") -> [OutboxRecord] {
        ids.map {
            OutboxRecord(
                id: $0, entry: OutboxEntry(
                    topic: "t", payload: [UInt8($0 & 0xFF)], sampleTime: Date(timeIntervalSince1970: Double($0)),
                    stream: stream),
                enqueuedAt: Date(timeIntervalSince1970: 0))
        }
    }

    @Test func nothingHappensUntilConnected() {
        var window = PublishWindow(capacity: 4)
        #expect(window.appended().isEmpty)
        #expect(window.connectionChanged(connected: true) == [.fetch(after: 0, limit: 4, generation: 1)])
    }

    @Test func fillsTheWindowInOrderAndNeverBeyondIt() {
        var window = PublishWindow(capacity: 4)
        _ = window.connectionChanged(connected: true)
        #expect(window.appended().isEmpty)  // a fetch is already outstanding
        let actions = window.fetched(records(1...4), limit: 4, generation: 1)
        #expect(actions == [.publish(records(1...4), generation: 1)])
        #expect(window.inFlight == [1, 2, 3, 4])
        #expect(window.appended().isEmpty)  // window full
        // One acknowledgement frees one slot and starts one removal.
        #expect(window.acknowledged(1, generation: 1) == [.remove([1]), .fetch(after: 4, limit: 1, generation: 1)])
        #expect(window.fetched(records(5...5), limit: 1, generation: 1) == [.publish(records(5...5), generation: 1)])
    }

    @Test func acknowledgementsAreBatchedWhileARemovalRuns() {
        var window = PublishWindow(capacity: 8)
        _ = window.connectionChanged(connected: true)
        _ = window.fetched(records(1...3), limit: 8, generation: 1)  // short read: nothing more for now
        #expect(window.acknowledged(1, generation: 1) == [.remove([1])])
        #expect(window.acknowledged(2, generation: 1).isEmpty)
        #expect(window.acknowledged(3, generation: 1).isEmpty)
        #expect(window.removed([1]) == [.remove([2, 3])])
        #expect(window.removed([2, 3]).isEmpty)
        #expect(window.isIdle)
    }

    @Test func aShortReadStopsReadingUntilSomethingIsAppended() {
        var window = PublishWindow(capacity: 8)
        _ = window.connectionChanged(connected: true)
        #expect(window.fetched(records(1...2), limit: 8, generation: 1) == [.publish(records(1...2), generation: 1)])
        #expect(window.appended() == [.fetch(after: 2, limit: 6, generation: 1)])
    }

    @Test func aDisconnectReplaysFromTheOldestUnacknowledgedRow() {
        var window = PublishWindow(capacity: 4)
        _ = window.connectionChanged(connected: true)
        _ = window.fetched(records(1...4), limit: 4, generation: 1)
        _ = window.acknowledged(1, generation: 1)  // removal of 1 is under way
        #expect(window.connectionChanged(connected: false).isEmpty)
        #expect(window.inFlight.isEmpty)
        // Late results of the old generation: an acknowledgement still counts, a failure does not.
        #expect(window.acknowledged(2, generation: 1).isEmpty)
        #expect(window.failedTransiently(3, generation: 1).isEmpty)
        #expect(window.appended().isEmpty)  // not connected
        #expect(window.connectionChanged(connected: true) == [.fetch(after: 0, limit: 4, generation: 3)])
        // The outbox still holds 1 and 2 (their deletions are pending): they are skipped, not resent.
        #expect(window.fetched(records(1...4), limit: 4, generation: 3) == [.publish(records(3...4), generation: 3)])
        #expect(window.inFlight == [3, 4])
    }

    @Test func aTransientFailurePausesAndRestartsTheGeneration() {
        var window = PublishWindow(capacity: 4)
        _ = window.connectionChanged(connected: true)
        _ = window.fetched(records(1...4), limit: 4, generation: 1)
        #expect(window.failedTransiently(2, generation: 1) == [.resumeLater])
        #expect(window.appended().isEmpty)  // paused
        #expect(window.resume() == [.fetch(after: 0, limit: 4, generation: 2)])
        // A stale read of the old generation is ignored.
        #expect(window.fetched(records(5...6), limit: 4, generation: 1).isEmpty)
    }

    @Test func aPermanentRefusalDiscardsTheRowAndMovesOn() {
        var window = PublishWindow(capacity: 2)
        _ = window.connectionChanged(connected: true)
        _ = window.fetched(records(1...2), limit: 2, generation: 1)
        #expect(window.failedPermanently(1, generation: 1) == [.discard([1]), .fetch(after: 2, limit: 1, generation: 1)])
        #expect(window.discarded([1]).isEmpty)
        #expect(window.acknowledged.isEmpty)
    }

    @Test func aFailedRemovalIsRetriedWithTheNextBatch() {
        var window = PublishWindow(capacity: 4)
        _ = window.connectionChanged(connected: true)
        _ = window.fetched(records(1...2), limit: 4, generation: 1)
        _ = window.acknowledged(1, generation: 1)
        _ = window.acknowledged(2, generation: 1)
        #expect(window.removeFailed([1]) == [.resumeLater])
        #expect(window.resume() == [.remove([1, 2])])  // the short read left nothing more to fetch
    }
}
