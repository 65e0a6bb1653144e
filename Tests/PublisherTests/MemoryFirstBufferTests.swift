import Foundation
import Outbox
import Testing

@testable import Publisher

/// The memory-first mode's spill decisions, without I/O: instants are made up, nothing sleeps.
@Suite struct MemoryFirstBufferTests {
    let t0 = ContinuousClock.now

    private func entries(_ seqs: ClosedRange<Int>, stream: String = "dev") -> [OutboxEntry] {
        seqs.map {
            OutboxEntry(
                topic: "t/\(stream)", payload: Array("\($0)".utf8), sampleTime: Date(timeIntervalSince1970: Double($0)),
                stream: stream)
        }
    }

    /// A buffer connected to a broker, its outbox drained (publishing from memory).
    private func live(spillAfter: Duration = .seconds(2), limit: Int = 100) -> MemoryFirstBuffer {
        var buffer = MemoryFirstBuffer(spillAfter: spillAfter, limit: limit)
        #expect(buffer.connectionChanged(connected: true).isEmpty)
        buffer.storeDrained()
        return buffer
    }

    private func published(_ actions: [MemoryFirstBuffer.Action]) -> [OutboxEntry] {
        actions.flatMap { action -> [OutboxEntry] in
            if case .publish(let items) = action { return items.map(\.entry) }
            return []
        }
    }

    private func stored(_ actions: [MemoryFirstBuffer.Action]) -> [OutboxEntry] {
        actions.flatMap { action -> [OutboxEntry] in
            if case .store(let entries, _, _) = action { return entries }
            return []
        }
    }

    private func isCheck(_ action: MemoryFirstBuffer.Action) -> Bool {
        if case .checkAt = action { return true }
        return false
    }

    @Test func beforeTheOutboxIsKnownDrainedReadingsGoToTheOutbox() {
        var buffer = MemoryFirstBuffer(spillAfter: .seconds(2), limit: 100)
        #expect(buffer.offered(entries(1...2), now: t0) == [.store(entries(1...2), spilled: nil)])
        _ = buffer.connectionChanged(connected: true)
        // Connected, but the outbox may still hold readings of an earlier run.
        #expect(buffer.offered(entries(3...3), now: t0) == [.store(entries(3...3), spilled: nil)])
        buffer.storeDrained()
        #expect(published(buffer.offered(entries(4...4), now: t0)) == entries(4...4))
    }

    @Test func promptlyAcknowledgedReadingsNeverReachTheOutbox() throws {
        var buffer = live()
        var now = t0
        for seq in 1...100 {
            let actions = buffer.offered(entries(seq...seq), now: now)
            #expect(published(actions) == entries(seq...seq))
            #expect(stored(actions).isEmpty)
            let id = try #require(buffer.held.last?.id)
            now += .milliseconds(30)
            buffer.acknowledged(id)
            #expect(stored(buffer.check(now: now)).isEmpty)
        }
        #expect(buffer.held.isEmpty)
        #expect(buffer.spilled.isEmpty)
        #expect(buffer.publishesFromMemory)
    }

    /// Held readings are found by id whatever the order of acknowledgements (a binary search over
    /// ids in ascending order); an id no longer held is not found.
    @Test func acknowledgementsOutOfOrderFindTheirReading() throws {
        var buffer = live(limit: 1000)
        _ = buffer.offered(entries(1...500), now: t0)
        let ids = buffer.held.map(\.id)
        for id in ids.reversed() where id % 2 == 0 { buffer.acknowledged(id) }
        #expect(buffer.held.map(\.id) == ids.filter { $0 % 2 == 1 })
        #expect(ids.allSatisfy { buffer.holds($0) == ($0 % 2 == 1) })
        #expect(!buffer.holds(try #require(ids.last) + 1))
        for id in ids.shuffled() { buffer.acknowledged(id) }
        #expect(buffer.held.isEmpty)
        #expect(buffer.spilled.isEmpty)
    }

    @Test func aLateAcknowledgementSpillsEverythingHeldInOrder() {
        var buffer = live()
        let first = buffer.offered(entries(1...3), now: t0)
        // One timer, for the oldest reading's deadline.
        #expect(first.contains(.checkAt(t0 + .seconds(2))))
        #expect(!buffer.offered(entries(4...5), now: t0 + .seconds(1)).contains(where: isCheck))
        buffer.acknowledged(buffer.held[0].id)  // reading 1 made it
        // Not yet late: the check asks again for the new oldest's deadline.
        #expect(buffer.check(now: t0 + .milliseconds(1999)) == [.checkAt(t0 + .seconds(2))])
        // The spill names each reading's memory publish, for an acknowledgement that still comes.
        let ids = buffer.held.map(\.id)
        let spill = buffer.check(now: t0 + .seconds(2))
        #expect(spill == [.store(entries(2...5), spilled: .lateAcknowledgement, published: ids)])
        #expect(buffer.held.isEmpty)
        #expect(buffer.spilled == [.lateAcknowledgement: 4])
        // Until the outbox drains, new readings queue behind the spilled ones.
        #expect(buffer.offered(entries(6...6), now: t0 + .seconds(3)) == [.store(entries(6...6), spilled: nil)])
        // The late acknowledgement of a spilled reading changes nothing here (the driver deletes its
        // row if the outbox has not sent it again).
        buffer.acknowledged(2)
        #expect(!buffer.publishesFromMemory)
        buffer.storeDrained()
        #expect(published(buffer.offered(entries(7...7), now: t0 + .seconds(4))) == entries(7...7))
    }

    @Test func theBrokerGoingAwaySpillsAtOnceAndLaterReadingsGoToTheOutbox() {
        var buffer = live()
        let both = entries(1...4, stream: "a") + entries(1...2, stream: "b")
        _ = buffer.offered(both, now: t0)
        let ids = buffer.held.map(\.id)
        #expect(buffer.connectionChanged(connected: false) == [.store(both, spilled: .disconnected, published: ids)])
        #expect(
            buffer.offered(entries(5...5, stream: "a"), now: t0) == [.store(entries(5...5, stream: "a"), spilled: nil)])
        // Reconnected: the outbox is replayed first; memory publishing waits for it to drain.
        _ = buffer.connectionChanged(connected: true)
        #expect(stored(buffer.offered(entries(6...6, stream: "a"), now: t0)) == entries(6...6, stream: "a"))
        buffer.storeDrained()
        #expect(buffer.publishesFromMemory)
        // Drained while disconnected does not count.
        _ = buffer.connectionChanged(connected: false)
        buffer.storeDrained()
        #expect(!buffer.publishesFromMemory)
    }

    @Test func aFailedPublishSpillsEverythingHeld() {
        var buffer = live()
        _ = buffer.offered(entries(1...3), now: t0)
        let ids = buffer.held.map(\.id)
        #expect(buffer.failedTransiently(ids[1]) == [.store(entries(1...3), spilled: .publishFailed, published: ids)])
        // The outcome of a reading no longer held changes nothing.
        #expect(buffer.failedTransiently(ids[2]).isEmpty)
    }

    @Test func aRefusedReadingLeavesMemoryWithoutASpill() {
        var buffer = live()
        _ = buffer.offered(entries(1...2), now: t0)
        let refused = buffer.refused(buffer.held[0].id)
        #expect(refused)
        #expect(buffer.held.map(\.entry) == entries(2...2))
        #expect(buffer.publishesFromMemory)
    }

    @Test func moreThanTheLimitSpillsTheHeldAndTheNewReadings() {
        var buffer = live(limit: 4)
        _ = buffer.offered(entries(1...3), now: t0)
        let ids = buffer.held.map(\.id)
        // The new readings were never published: only the held ones have a memory publish.
        #expect(buffer.offered(entries(4...5), now: t0) == [.store(entries(1...5), spilled: .full, published: ids)])
        #expect(buffer.spilled == [.full: 3])
    }

    @Test func stoppingSpillsEverythingHeldAndKeepsLaterReadingsDurable() {
        var buffer = live()
        _ = buffer.offered(entries(1...2), now: t0)
        let ids = buffer.held.map(\.id)
        #expect(buffer.stop() == [.store(entries(1...2), spilled: .stopping, published: ids)])
        buffer.storeDrained()
        #expect(buffer.offered(entries(3...3), now: t0) == [.store(entries(3...3), spilled: nil)])
    }

    /// The loss bound: at any instant, what is only in memory was published within the last
    /// `spillAfter` (plus however late the driver's timer fires; here it fires on time).
    @Test func nothingStaysInMemoryLongerThanTheSpillDelay() throws {
        var buffer = live(spillAfter: .milliseconds(500), limit: 10_000)
        var now = t0
        var dueChecks: [ContinuousClock.Instant] = []
        for seq in 1...200 {
            let actions = buffer.offered(entries(seq...seq), now: now)
            for case .checkAt(let due) in actions { dueChecks.append(due) }
            // Every third reading is never acknowledged (a broker that lost them).
            if seq % 3 != 0 { buffer.acknowledged(try #require(buffer.held.last?.id)) }
            now += .milliseconds(20)
            while let due = dueChecks.first, due <= now {
                dueChecks.removeFirst()
                for case .checkAt(let next) in buffer.check(now: due) { dueChecks.append(next) }
            }
            // After a spill the driver reports the outbox drained again once it was replayed.
            buffer.storeDrained()
            if let oldest = buffer.held.first {
                #expect(now - oldest.sentAt <= .milliseconds(500) + .milliseconds(20))
            }
        }
        #expect(buffer.spilled[.lateAcknowledgement, default: 0] > 0)
    }
}
