import MQTT
import Outbox
import Synchronization

/// What other threads hand to the publisher: entries to commit (from the gateway) and publish
/// outcomes (from the MQTT network thread). The publisher drains it on the outbox's thread.
///
/// Each hand-over decides whether the outbox thread must wake now: entries always wake it (one
/// drain for whatever gathered meanwhile: group commit); outcomes only when the window is waiting
/// for room or enough gathered, otherwise they wait for the next drain or a short timer, so a lone
/// acknowledgement does not cost a thread wake-up of its own.
final class PublisherInbox: Sendable {
    struct Submission: Sendable {
        let entries: [OutboxEntry]
        /// Resumed with the commit's result; nil for ``Publisher/offer(_:)``.
        let continuation: CheckedContinuation<Result<Void, OutboxError>, Never>?
        /// Memory-first mode: readings held in memory and written to the outbox after all, and why
        /// (logged once they are committed).
        var spilled: MemoryFirstBuffer.SpillReason? = nil
        /// Memory-first mode: the memory-publish ids of the first `published.count` entries (spilled
        /// readings the broker may still acknowledge).
        var published: [UInt64] = []
    }

    struct Outcome: Sendable {
        let id: Int64
        let generation: Int
        let result: Result<Void, MQTTError>
        /// A reading published from memory (memory-first mode): `id` is its ``MemoryFirstBuffer/Item`` id.
        var fromMemory = false
    }

    /// What the caller must do after a hand-over.
    enum Wake: Equatable {
        case none
        /// Schedule a drain now.
        case now
        /// Schedule a drain after the acknowledgement delay.
        case later
    }

    struct Taken {
        var submissions: [Submission]
        var outcomes: [Outcome]
    }

    private struct State {
        var submissions: [Submission] = []
        var outcomes: [Outcome] = []
        var drainScheduled = false
        var timerScheduled = false
        /// Set by the publisher: outcomes should be handled at once (the window waits for room,
        /// or a stop waits for the window to empty).
        var urgent = false

        mutating func schedule(now: Bool) -> Wake {
            if drainScheduled { return .none }
            if now {
                drainScheduled = true
                return .now
            }
            if timerScheduled { return .none }
            timerScheduled = true
            return .later
        }
    }

    private let state = Mutex(State())
    /// Outcomes gathered before they wake the thread even when not urgent.
    private let batch: Int

    init(batch: Int) {
        self.batch = max(1, batch)
    }

    func submit(_ submission: Submission) -> Wake {
        state.withLock { state in
            state.submissions.append(submission)
            return state.schedule(now: true)
        }
    }

    func report(_ outcome: Outcome) -> Wake {
        let batch = self.batch
        return state.withLock { state in
            state.outcomes.append(outcome)
            return state.schedule(now: state.urgent || state.outcomes.count >= batch)
        }
    }

    /// Takes everything gathered into `taken`, whose arrays must be empty: they become the inbox's
    /// (so arrays emptied with their capacity kept take turns, and a hand-over per reading does not
    /// allocate on every first append, issue 20). Called by the drain (which clears `drainScheduled`).
    func take(into taken: inout Taken) {
        precondition(taken.submissions.isEmpty && taken.outcomes.isEmpty, "taking into arrays in use")
        state.withLock { state in
            state.drainScheduled = false
            swap(&taken.submissions, &state.submissions)
            swap(&taken.outcomes, &state.outcomes)
        }
    }

    /// Takes everything gathered into new arrays.
    func take() -> Taken {
        var taken = Taken(submissions: [], outcomes: [])
        take(into: &taken)
        return taken
    }

    /// Entries wait for the next drain.
    var hasSubmissions: Bool { state.withLock { !$0.submissions.isEmpty } }

    /// The acknowledgement timer fired; returns whether a drain is still wanted.
    func timerFired() -> Bool {
        state.withLock { state in
            state.timerScheduled = false
            return !state.outcomes.isEmpty || !state.submissions.isEmpty
        }
    }

    /// Changes whether outcomes wake the thread at once; returns whether a drain should run now
    /// for outcomes already waiting.
    func setUrgent(_ urgent: Bool) -> Bool {
        state.withLock { state in
            state.urgent = urgent
            return urgent && !state.outcomes.isEmpty && state.schedule(now: true) == .now
        }
    }
}
