import Outbox

/// The publisher's flow control as a pure state machine: which outbox rows to read, which to
/// publish, which to delete, and what to do when the connection or a publish fails.
///
/// No I/O: every input returns the ``Action``s the driver (``Publisher``) must perform.
///
/// Rules:
/// - At most `capacity` publishes are awaiting acknowledgement at any time; the window is
///   refilled once a quarter of it is free (or it is empty), so reads come in chunks.
/// - Rows are handed out in id order (the outbox's append order), so every stream keeps its
///   order on the wire; the broker keeps the order of in-flight QoS 1 publishes of one
///   connection.
/// - Rows just appended are handed out at once, without reading them back, when the window has
///   published everything before them (the *live tail*); otherwise they are read in order later.
/// - A row is deleted only after its acknowledgement; deletions are batched: `removalBatch` rows at
///   a time, or whatever gathered once the driver's removal delay passed (``Action/removeLater``),
///   or at once while disconnected; one removal at a time. A failed removal is retried after a
///   pause (``Action/retryRemovalLater``) while publishing goes on.
/// - While disconnected nothing new is handed out. Publishes already in flight stay in the
///   window: the MQTT client keeps them and re-sends them after the reconnect, ahead of anything
///   newer, so the broker still sees every stream in order.
/// - A publish that fails for connection reasons (not connected, connection lost), or a window
///   that makes no progress for `stallTimeout` while connected, starts a new *generation*: the
///   window empties and reading restarts from the oldest unacknowledged row, so the backlog is
///   replayed in its original order (at least once). Results of older generations still count
///   as acknowledgements but never move the window.
/// - A row the broker refuses for good (too large, invalid topic, not authorised) is discarded
///   so it cannot block the queue forever.
struct PublishWindow: Sendable {
    enum Action: Sendable, Equatable {
        /// Read up to `limit` rows with ids greater than `after`; report with the same `read` number.
        case fetch(after: Int64, limit: Int, read: Int)
        /// Publish these rows, in this order.
        case publish([OutboxRecord], generation: Int)
        /// Delete these acknowledged rows.
        case remove([Int64])
        /// Call ``removalDelayElapsed()`` after the removal delay (acknowledged rows are waiting).
        case removeLater
        /// Drop these rows the broker refused for good.
        case discard([Int64])
        /// Call ``resume()`` after a pause (transient failure while believed connected).
        case resumeLater
        /// Call ``removalRetryDue()`` after a pause (deleting acknowledged rows failed).
        case retryRemovalLater
    }

    let capacity: Int
    /// Acknowledged rows deleted at once as soon as this many gathered.
    let removalBatch: Int
    /// Acknowledged rows join a commit's transaction once the oldest of them waited this long.
    let foldAfter: Duration
    let stallTimeout: Duration
    private(set) var connected = false
    private(set) var paused = false
    private(set) var generation = 0
    /// The highest id handed out (or skipped) in this generation.
    private(set) var cursor: Int64 = 0
    /// Ids published in this generation and not yet resolved.
    private(set) var inFlight: Set<Int64> = []
    /// Acknowledged ids whose deletion has not completed.
    private(set) var acknowledged: Set<Int64> = []
    private var pendingRemoval: [Int64] = []
    /// When the oldest row of `pendingRemoval` was acknowledged.
    private var pendingSince: ContinuousClock.Instant?
    private var removing = false
    private var removalScheduled = false
    /// A removal failed; the next one waits for ``removalRetryDue()``.
    private var removalRetryPending = false
    /// The number of the outstanding read, if one is outstanding; results of other reads are stale.
    private var outstandingRead: Int?
    private var reads = 0
    /// False once a read returned less than asked and nothing was appended since it was issued.
    private var mayHaveMore = true
    private var appends = 0
    private var appendsAtRead = 0
    /// When the window last moved (a publish handed out or acknowledged).
    private var lastProgress: ContinuousClock.Instant?

    init(
        capacity: Int, removalBatch: Int, foldAfter: Duration = .milliseconds(20), stallTimeout: Duration = .seconds(30)
    ) {
        precondition(capacity > 0, "the in-flight window needs room for at least one publish")
        self.capacity = capacity
        self.removalBatch = max(1, removalBatch)
        self.foldAfter = foldAfter
        self.stallTimeout = stallTimeout
    }

    /// Rows may wait in the outbox beyond what was handed out (acknowledgements free room for them).
    var hasBacklog: Bool { connected && !paused && mayHaveMore }

    /// Connected and running, with every row of the outbox handed out (published, or acknowledged
    /// and awaiting deletion): a newer publish now cannot overtake a stored one.
    var handedOutEverything: Bool { connected && !paused && !mayHaveMore && outstandingRead == nil }

    var isIdle: Bool { inFlight.isEmpty && pendingRemoval.isEmpty && !removing && outstandingRead == nil }

    // MARK: - Inputs

    mutating func connectionChanged(connected: Bool, now: ContinuousClock.Instant) -> [Action] {
        guard connected != self.connected else { return [] }
        self.connected = connected
        lastProgress = now
        outstandingRead = nil
        mayHaveMore = true
        return flushRemovals() + fill()
    }

    /// When the window counts as stalled unless progress comes first: `stallTimeout` after the
    /// last progress while connected with publishes in flight; nil when nothing can stall.
    var stallDeadline: ContinuousClock.Instant? {
        guard connected, !inFlight.isEmpty, let lastProgress else { return nil }
        return lastProgress + stallTimeout
    }

    /// Called at (or after) ``stallDeadline``: a connected window whose publishes got no
    /// acknowledgement for `stallTimeout` is restarted from the oldest unacknowledged row.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard let deadline = stallDeadline, now >= deadline else { return [] }
        restartGeneration()
        self.lastProgress = now
        return fill()
    }

    /// `records` were appended to the outbox (ids increasing). When everything before them was
    /// handed out, as many as the window has room for are published at once (no read back); the
    /// rest is read later, in order. With no records (rows appended that the driver does not
    /// hold), they are all read later.
    mutating func appended(_ records: [OutboxRecord], now: ContinuousClock.Instant) -> [Action] {
        appends += 1
        guard connected, !paused, outstandingRead == nil, !mayHaveMore, let first = records.first,
            first.id > cursor
        else {
            mayHaveMore = true
            return fill()
        }
        let batch = Array(records.prefix(capacity - inFlight.count))
        if batch.count < records.count { mayHaveMore = true }
        for record in batch {
            cursor = record.id
            inFlight.insert(record.id)
        }
        if !batch.isEmpty && inFlight.count == batch.count { lastProgress = now }
        return (batch.isEmpty ? [] : [.publish(batch, generation: generation)]) + fill()
    }

    mutating func fetched(
        _ records: [OutboxRecord], limit: Int, read: Int, now: ContinuousClock.Instant
    ) -> [Action] {
        guard read == outstandingRead else { return fill() }
        outstandingRead = nil
        if records.count < limit && appends == appendsAtRead { mayHaveMore = false }
        var batch: [OutboxRecord] = []
        for record in records where record.id > cursor {
            cursor = record.id
            if acknowledged.contains(record.id) { continue }
            inFlight.insert(record.id)
            batch.append(record)
        }
        if !batch.isEmpty && inFlight.count == batch.count { lastProgress = now }
        return (batch.isEmpty ? [] : [.publish(batch, generation: generation)]) + fill()
    }

    /// Reading the outbox failed: try again later.
    mutating func fetchFailed(read: Int) -> [Action] {
        guard read == outstandingRead else { return fill() }
        outstandingRead = nil
        paused = true
        return [.resumeLater]
    }

    /// The broker acknowledged `id` (or a QoS 0 publish was sent).
    mutating func acknowledged(_ id: Int64, generation: Int, now: ContinuousClock.Instant) -> [Action] {
        if generation == self.generation, inFlight.remove(id) != nil { lastProgress = now }
        if acknowledged.insert(id).inserted {
            if pendingRemoval.isEmpty {
                pendingSince = now
                // A batch's room at once: grown an append at a time, its 2 KB came through eight
                // reallocations, two of them large enough to make glibc consolidate its free lists.
                pendingRemoval.reserveCapacity(removalBatch)
            }
            pendingRemoval.append(id)
        }
        return flushRemovals() + fill()
    }

    /// Row `id` is known to the broker already (a reading spilled from memory whose memory publish
    /// was acknowledged after the spill): when not handed out in this generation, it is deleted
    /// unsent (reads skip it until then). Nil when it was handed out (its own outcome settles it)
    /// or is acknowledged already.
    mutating func acknowledgedUnsent(_ id: Int64, now: ContinuousClock.Instant) -> [Action]? {
        guard id > cursor, !acknowledged.contains(id) else { return nil }
        return acknowledged(id, generation: generation, now: now)
    }

    /// A publish failed because of the connection (not connected, lost, timed out).
    mutating func failedTransiently(_ id: Int64, generation: Int) -> [Action] {
        guard generation == self.generation, inFlight.contains(id) else { return [] }
        restartGeneration()
        paused = true
        return [.resumeLater]
    }

    /// The broker refused `id` for good.
    mutating func failedPermanently(_ id: Int64, generation: Int) -> [Action] {
        if generation == self.generation { inFlight.remove(id) }
        acknowledged.insert(id)
        return [.discard([id])] + fill()
    }

    /// A discard completed (or failed; the row is then retried after the next restart).
    mutating func discarded(_ ids: [Int64]) -> [Action] {
        for id in ids { acknowledged.remove(id) }
        return fill()
    }

    mutating func removed(_ ids: [Int64]) -> [Action] {
        removing = false
        for id in ids { acknowledged.remove(id) }
        return flushRemovals()
    }

    /// Deleting acknowledged rows failed (a full disk): keep them and try again after a pause, together
    /// with what is acknowledged meanwhile. Publishing goes on: acknowledged rows are never sent
    /// again in this generation, and a failing deletion must not throttle the drain.
    mutating func removeFailed(_ ids: [Int64]) -> [Action] {
        removing = false
        pendingRemoval.insert(contentsOf: ids, at: 0)
        removalRetryPending = true
        return [.retryRemovalLater]
    }

    /// The pause after a failed removal passed: delete everything acknowledged so far.
    mutating func removalRetryDue() -> [Action] {
        removalRetryPending = false
        return flushRemovals(force: true)
    }

    /// The acknowledged rows a commit deletes in its transaction: with a ``Action/remove(_:)`` the
    /// driver runs in that transaction, every row not being deleted yet, whatever their number (they
    /// would be the next deletion, a transaction of its own); without one, all of them once the
    /// oldest waited ``foldAfter``. At low rates a batch never gathers, and joining a commit spares
    /// the thread the removal delay's wake-up and a transaction of their own; rows joining every
    /// commit would write the counters' page in each (at high rates a batch fills before
    /// `foldAfter`). Their ids come back through ``removed(_:)`` or ``removeFailed(_:)`` (with
    /// those of that removal).
    mutating func removalsJoiningCommit(now: ContinuousClock.Instant) -> [Int64] {
        guard !removalRetryPending, !pendingRemoval.isEmpty else { return [] }
        guard removing || pendingSince.map({ now - $0 >= foldAfter }) == true else { return [] }
        removing = true
        defer { pendingRemoval.removeAll() }
        return pendingRemoval
    }

    /// The removal delay asked for by ``Action/removeLater`` passed: delete what gathered.
    mutating func removalDelayElapsed() -> [Action] {
        removalScheduled = false
        return flushRemovals(force: true)
    }

    mutating func resume() -> [Action] {
        paused = false
        return flushRemovals() + fill()
    }

    // MARK: - Internals

    private mutating func restartGeneration() {
        generation += 1
        inFlight.removeAll()
        cursor = 0
        outstandingRead = nil
        mayHaveMore = true
    }

    private mutating func fill() -> [Action] {
        guard connected, !paused, outstandingRead == nil, mayHaveMore else { return [] }
        let room = capacity - inFlight.count
        // Refill in chunks of at least a quarter window (fewer, larger reads) unless idle.
        guard room > 0, room >= max(1, capacity / 4) || inFlight.isEmpty else { return [] }
        reads += 1
        outstandingRead = reads
        appendsAtRead = appends
        return [.fetch(after: cursor, limit: room, read: reads)]
    }

    /// Deletes acknowledged rows in batches: once `removalBatch` have gathered, at once while
    /// disconnected (nothing else is coming), else after the driver's removal delay.
    private mutating func flushRemovals(force: Bool = false) -> [Action] {
        guard !removing, !removalRetryPending, !pendingRemoval.isEmpty else { return [] }
        guard pendingRemoval.count >= removalBatch || !connected || force else {
            guard !removalScheduled else { return [] }
            removalScheduled = true
            return [.removeLater]
        }
        removing = true
        defer { pendingRemoval.removeAll() }
        return [.remove(pendingRemoval)]
    }
}
