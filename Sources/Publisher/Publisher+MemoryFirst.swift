import MQTT
import Outbox

/// Memory-first mode (``PublisherOptions/Mode/memoryFirst(spillAfter:)``): performs the actions of
/// ``MemoryFirstBuffer`` on the outbox's thread. Readings published from memory bypass the window
/// and the outbox; spilled ones take the durable path (``commit(_:)``) in order.
extension Publisher {
    /// Offered readings of `submissions` go through the buffer (published from memory, or returned
    /// for the outbox); submits always commit. Returns what must be committed, in order.
    func offerFromMemory(_ submissions: [PublisherInbox.Submission]) -> [PublisherInbox.Submission] {
        var toCommit: [PublisherInbox.Submission] = []
        for submission in submissions {
            guard submission.continuation == nil, memory != nil else {
                toCommit.append(submission)
                continue
            }
            toCommit += memoryActions(memory?.offered(submission.entries, now: clock.now) ?? [])
        }
        return toCommit
    }

    /// Performs buffer actions outside a drain: spilled readings are committed at once (or join the
    /// readings held while the outbox refuses writes).
    func performMemory(_ actions: [MemoryFirstBuffer.Action]) {
        let toCommit = memoryActions(actions)
        guard !toCommit.isEmpty else { return }
        if heldRetryScheduled {
            for submission in toCommit { hold(submission) }
        } else {
            commit(toCommit)
        }
    }

    /// Publishes and schedules what the buffer asks; returns the readings to commit.
    private func memoryActions(_ actions: [MemoryFirstBuffer.Action]) -> [PublisherInbox.Submission] {
        var toCommit: [PublisherInbox.Submission] = []
        for action in actions {
            switch action {
            case .publish(let items):
                // A publish that fails at once spills everything held: the rest must not go out
                // from memory (they are in the outbox now, in order).
                for item in items where memory?.holds(item.id) == true { sendFromMemory(item) }
            case .store(let entries, let reason, let published):
                // Logged by the commit, once the readings are in the file: a log line that came
                // first would claim a reading survives a SIGKILL that can still lose it.
                toCommit.append(
                    PublisherInbox.Submission(
                        entries: entries, continuation: nil, spilled: reason, published: published))
            case .checkAt(let due):
                onThread(at: due) { publisher in
                    // Acknowledgements already reported may still wait in the inbox for their
                    // batch (`acknowledgementDelay`): handled first, so one that came in time is
                    // not taken for late (a spurious spill writes and re-sends everything held).
                    publisher.drain()
                    publisher.performMemory(publisher.memory?.check(now: publisher.clock.now) ?? [])
                }
            }
        }
        return toCommit
    }

    private func sendFromMemory(_ item: MemoryFirstBuffer.Item) {
        let id = Int64(item.id)
        do {
            try client.publish(message(for: item.entry)) { [self] result in
                report(PublisherInbox.Outcome(id: id, generation: 0, result: result, fromMemory: true))
            }
        } catch {
            memoryPublishFailed(item.id, error: error, topic: item.entry.topic)
        }
    }

    /// The outcome of a publish from memory.
    func memoryOutcome(_ outcome: PublisherInbox.Outcome) {
        let id = UInt64(outcome.id)
        switch outcome.result {
        case .success:
            if memory?.holds(id) == true {
                published += 1
            } else if let row = spilledRows.removeValue(forKey: id),
                let actions = window.acknowledgedUnsent(row, now: clock.now)
            {
                // Spilled, and acknowledged before the outbox sent it again: its row goes unsent.
                published += 1
                perform(actions)
            } else if held.acknowledged(id) {
                // Spilled while the outbox refused writes, and delivered after all: never written.
                published += 1
            }
            memory?.acknowledged(id)
        case .failure(let error):
            spilledRows.removeValue(forKey: id)
            held.publishFailed(id)
            memoryPublishFailed(id, error: error, topic: nil)
        }
        if !waiters.isEmpty { wakeWaiters() }
    }

    private func memoryPublishFailed(_ id: UInt64, error: MQTTError, topic: String?) {
        if Self.isPermanent(error) {
            guard memory?.refused(id) == true else { return }
            logger.error(
                "broker refused a reading; dropping it", [("topic", topic ?? "?"), ("error", error.message)])
            try? withStore { try $0.countDropped(1, reason: .rejected) }
        } else {
            performMemory(memory?.failedTransiently(id) ?? [])
        }
    }

    /// Remembers the rows of committed spilled readings whose memory publish may still be
    /// acknowledged. `records` are what the commit of `submissions` returned: the last
    /// `records.count` of their entries, in order (a cap may drop the oldest of a batch).
    func noteSpilledRows(_ submissions: [PublisherInbox.Submission], _ records: [OutboxRecord]) {
        guard memory != nil, submissions.contains(where: { !$0.published.isEmpty }) else { return }
        // Each submission's ids name its first entries; the rest were never published from memory.
        var memoryIDs: [UInt64] = []
        for submission in submissions {
            let named = submission.published.prefix(submission.entries.count)
            memoryIDs.append(contentsOf: named)
            memoryIDs.append(contentsOf: repeatElement(0, count: submission.entries.count - named.count))
        }
        noteSpilledRows(memoryIDs, records)
    }

    /// The same with each committed entry's memory-publish id given (0: none), as for held readings
    /// committed at last; `records` are the last `records.count` of those entries.
    func noteSpilledRows(_ memoryIDs: [UInt64], _ records: [OutboxRecord]) {
        guard memory != nil else { return }
        let first = records.count - memoryIDs.count
        for (index, id) in memoryIDs.enumerated() where id != 0 && first + index >= 0 {
            spilledRows[id] = records[first + index].id
        }
    }

    /// After a spill or an outage, publishing from memory resumes once the window has handed out
    /// every stored row and nothing waits in the hold, the broker connected: a reading published
    /// from memory then goes out behind all stored ones on the same connection, so no stream's order
    /// changes. (Waiting for the outbox to be empty would never end under a steady load.)
    func leaveStoreWhenDrained() {
        guard let memory, memory.storeInUse, !memory.stopping, window.handedOutEverything, held.isEmpty,
            !heldRetryScheduled, !inbox.hasSubmissions
        else { return }
        self.memory?.storeDrained()
    }
}
