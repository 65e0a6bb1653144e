import Outbox

/// The memory-first outbox mode (``PublisherOptions/Mode/memoryFirst(spillAfter:)``) as a pure
/// state machine: which offered readings are published straight from memory, and when the ones
/// held in memory must be written to the outbox (*spilled*) instead.
///
/// No I/O and no clock of its own: every input carries `now` and returns the ``Action``s the driver
/// (``Publisher``) performs.
///
/// Rules:
/// - While the broker is connected and the outbox has nothing waiting, offered readings are
///   published at once and kept in memory (in offer order) until the broker acknowledges them.
///   SQLite is not touched.
/// - Everything held is spilled at once, in order, when the oldest held reading has waited
///   `spillAfter` for its acknowledgement, when the connection goes down, when a publish fails,
///   when more than `limit` are held, or when the publisher stops.
/// - After a spill, and whenever the broker is away, offered readings go to the outbox behind what
///   is there (the durable path), so no reading overtakes an older one of its stream. Memory-first
///   publishing resumes only once the driver reports the outbox drained while connected
///   (``storeDrained()``).
/// - A spilled reading keeps its memory publish's id (``Action/store(_:spilled:published:)``): when
///   that publish is acknowledged after the spill, the driver deletes the reading's row unless the
///   outbox already handed it out again (then it arrives twice: at least once, never lost).
///
/// A SIGKILL therefore loses at most the readings published from memory within the last
/// `spillAfter` that the broker had not yet acknowledged.
struct MemoryFirstBuffer: Sendable {
    /// One reading published from memory, awaiting its acknowledgement.
    struct Item: Sendable, Equatable {
        let id: UInt64
        let entry: OutboxEntry
        let sentAt: ContinuousClock.Instant
    }

    enum Action: Sendable, Equatable {
        /// Publish these readings now, in this order; report each outcome with its id.
        case publish([Item])
        /// Commit these readings to the outbox, in this order (the durable path); `spilled` says why
        /// readings held in memory are among them (nil: newly offered readings only). `published`:
        /// the ids of the memory publishes of the first `published.count` readings, which the broker
        /// may still acknowledge (the driver then deletes their rows before they are sent again).
        case store([OutboxEntry], spilled: SpillReason?, published: [UInt64] = [])
        /// Call ``check(now:)`` at this instant.
        case checkAt(ContinuousClock.Instant)
    }

    /// Why held readings were written to the outbox.
    enum SpillReason: String, Sendable, Equatable {
        case lateAcknowledgement = "late_acknowledgement"
        case disconnected
        case publishFailed = "publish_failed"
        case full
        case stopping
    }

    let spillAfter: Duration
    let limit: Int
    /// Readings published from memory and not yet acknowledged, oldest first.
    private(set) var held: [Item] = []
    private(set) var connected = false
    /// The outbox may hold readings: offered ones go there until ``storeDrained()``. True at start
    /// (the file may hold readings of an earlier run).
    private(set) var storeInUse = true
    private(set) var stopping = false
    /// Readings spilled since start, by reason.
    private(set) var spilled: [SpillReason: Int] = [:]
    private var nextID: UInt64 = 1
    private var checkDue: ContinuousClock.Instant?

    init(spillAfter: Duration, limit: Int) {
        self.spillAfter = spillAfter
        self.limit = max(1, limit)
    }

    /// Whether offered readings are published from memory right now.
    var publishesFromMemory: Bool { connected && !storeInUse && !stopping }

    // MARK: - Inputs

    mutating func offered(_ entries: [OutboxEntry], now: ContinuousClock.Instant) -> [Action] {
        guard !entries.isEmpty else { return [] }
        guard publishesFromMemory else { return store(entries) }
        if held.count + entries.count > limit {
            let all = held.map(\.entry) + entries
            let published = held.map(\.id)
            count(held.count, .full)
            held.removeAll()
            storeInUse = true
            return [.store(all, spilled: .full, published: published)]
        }
        var items: [Item] = []
        items.reserveCapacity(entries.count)
        for entry in entries {
            items.append(Item(id: nextID, entry: entry, sentAt: now))
            nextID += 1
        }
        held += items
        return [.publish(items)] + scheduleCheck()
    }

    /// Whether `id` is still held (published from memory, not acknowledged, not spilled).
    func holds(_ id: UInt64) -> Bool { index(of: id) != nil }

    /// The broker acknowledged `id` (a reading spilled meanwhile is ignored here).
    mutating func acknowledged(_ id: UInt64) {
        guard let index = index(of: id) else { return }
        held.remove(at: index)
    }

    /// The broker refused `id` for good: it leaves memory (the driver counts it as dropped).
    /// Returns whether it was still held.
    mutating func refused(_ id: UInt64) -> Bool {
        guard let index = index(of: id) else { return false }
        held.remove(at: index)
        return true
    }

    /// Publishing `id` failed for a reason that can pass (not connected, connection lost).
    mutating func failedTransiently(_ id: UInt64) -> [Action] {
        guard index(of: id) != nil else { return [] }
        return spillAll(.publishFailed)
    }

    mutating func connectionChanged(connected: Bool) -> [Action] {
        self.connected = connected
        return connected ? [] : spillAll(.disconnected)
    }

    /// The instant asked for by ``Action/checkAt(_:)`` (or later) came.
    mutating func check(now: ContinuousClock.Instant) -> [Action] {
        checkDue = nil
        guard let oldest = held.first else { return [] }
        if now >= oldest.sentAt + spillAfter { return spillAll(.lateAcknowledgement) }
        return scheduleCheck()
    }

    /// The outbox is empty, nothing is in flight from it and the broker is connected: offered
    /// readings may be published from memory again.
    mutating func storeDrained() {
        guard connected, !stopping else { return }
        storeInUse = false
    }

    /// The publisher stops: everything held goes to the outbox, and so does whatever is offered later.
    mutating func stop() -> [Action] {
        stopping = true
        return spillAll(.stopping)
    }

    // MARK: - Internals

    private func index(of id: UInt64) -> Int? {
        // Acknowledgements come nearly in order: the oldest is the usual match.
        if held.first?.id == id { return 0 }
        // `held` is in ascending id order (ids are given out increasing; readings only leave it), so
        // a binary search: each reading of a burst is looked up right after being offered, and a
        // linear scan made a burst of n held readings cost n²/2 comparisons on the publish path.
        var low = 0
        var high = held.count
        while low < high {
            let middle = (low + high) / 2
            if held[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < held.count && held[low].id == id ? low : nil
    }

    private mutating func spillAll(_ reason: SpillReason) -> [Action] {
        storeInUse = true
        guard !held.isEmpty else { return [] }
        let entries = held.map(\.entry)
        let published = held.map(\.id)
        count(entries.count, reason)
        held.removeAll()
        return [.store(entries, spilled: reason, published: published)]
    }

    private mutating func store(_ entries: [OutboxEntry]) -> [Action] {
        storeInUse = true
        return [.store(entries, spilled: nil)]
    }

    private mutating func count(_ number: Int, _ reason: SpillReason) {
        guard number > 0 else { return }
        spilled[reason, default: 0] += number
    }

    /// One timer at a time, for the oldest held reading's deadline.
    private mutating func scheduleCheck() -> [Action] {
        guard checkDue == nil, let oldest = held.first else { return [] }
        let due = oldest.sentAt + spillAfter
        checkDue = due
        return [.checkAt(due)]
    }
}
