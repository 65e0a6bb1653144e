import Foundation
import Outbox
import Testing

@testable import Publisher

/// The publisher's hold of refused readings, without I/O: order, the limit, and spilled readings
/// that leave it when their memory publish is acknowledged.
@Suite struct HeldReadingsTests {
    private func entries(_ seqs: ClosedRange<Int>) -> [OutboxEntry] {
        seqs.map { OutboxEntry(topic: "t/dev", payload: Array("\($0)".utf8), sampleTime: Date(), stream: "dev") }
    }

    private func seqs(_ held: HeldReadings) -> [Int] {
        held.entries.compactMap { Int(String(decoding: $0.payload, as: UTF8.self)) }
    }

    @Test func anAcknowledgedSpilledReadingLeavesTheHoldAndTheRestKeepTheirOrder() {
        var held = HeldReadings()
        // A spill: readings 1...3 were published from memory (ids 11...13), 4 and 5 were not.
        let dropped =
            held.append(entries(1...5), published: [11, 12, 13], limit: 100)
            + held.append(entries(6...7), limit: 100)
        #expect(dropped == 0)
        let first = held.acknowledged(12)
        let again = held.acknowledged(12)
        let never = held.acknowledged(99)
        #expect(first)
        #expect(!again, "already gone")
        #expect(!never, "never held")
        #expect(seqs(held) == [1, 3, 4, 5, 6, 7])
        let (chunk, ids) = held.prefix(3)
        #expect(chunk.count == 3 && ids == [11, 13, 0])
    }

    @Test func aFailedMemoryPublishKeepsItsReadingToBeWritten() {
        var held = HeldReadings()
        _ = held.append(entries(1...2), published: [5, 6], limit: 100)
        held.publishFailed(5)
        let failed = held.acknowledged(5)
        let other = held.acknowledged(6)
        #expect(!failed, "a failed publish cannot be acknowledged afterwards")
        #expect(other)
        #expect(seqs(held) == [1])
        #expect(held.prefix(10).memoryIDs == [0])
    }

    @Test func theOldestGoBeyondTheLimitAndTheirIdsWithThem() {
        var held = HeldReadings()
        let none = held.append(entries(1...3), published: [1, 2, 3], limit: 4)
        let two = held.append(entries(4...6), limit: 4)
        #expect(none == 0 && two == 2)
        #expect(seqs(held) == [3, 4, 5, 6])
        let dropped = held.acknowledged(1)
        let kept = held.acknowledged(3)
        #expect(!dropped, "dropped with its reading")
        #expect(kept)
        held.removeFirst(2)
        #expect(seqs(held) == [6])
        held.removeAll()
        #expect(held.isEmpty && held.count == 0)
    }
}
