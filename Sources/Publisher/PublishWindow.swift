import Outbox

/// The publisher's flow control as a pure state machine: which outbox rows to read, which to
/// publish, which to delete, and what to do when the connection or a publish fails.
///
/// No I/O: every input returns the ``Action``s the driver (``Publisher``) must perform.
///
/// Rules:
/// - At most `capacity` publishes are awaiting acknowledgement at any time.
/// - Rows are handed out in id order (the outbox's append order), so every stream keeps its
///   order on the wire; the broker keeps the order of in-flight QoS 1 publishes of one
///   connection.
/// - A row is deleted only after its acknowledgement; acknowledgements are batched into one
///   removal at a time.
/// - Any connection change or transient failure starts a new *generation*: the window empties
///   and reading restarts from the oldest unacknowledged row, so after a reconnect the backlog
///   is replayed in its original order. Results of older generations still count as
///   acknowledgements but never move the window.
/// - A row the broker refuses for good (too large, invalid topic, not authorised) is discarded
///   so it cannot block the queue forever.
struct PublishWindow: Sendable {
    enum Action: Sendable, Equatable {
        /// Read up to `limit` rows with ids greater than `after`.
        case fetch(after: Int64, limit: Int, generation: Int)
        /// Publish these rows, in this order.
        case publish([OutboxRecord], generation: Int)
        /// Delete these acknowledged rows.
        case remove([Int64])
        /// Drop these rows the broker refused for good.
        case discard([Int64])
        /// Call ``resume()`` after a pause (transient failure while believed connected).
        case resumeLater
    }

    let capacity: Int
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
    private var removing = false
    private var fetching = false
    /// False once a read returned less than asked and nothing was appended since.
    private var mayHaveMore = true

    init(capacity: Int) {
        precondition(capacity > 0, "the in-flight window needs room for at least one publish")
        self.capacity = capacity
    }

    var isIdle: Bool { inFlight.isEmpty && pendingRemoval.isEmpty && !removing && !fetching }

    // MARK: - Inputs

    mutating func connectionChanged(connected: Bool) -> [Action] {
        guard connected != self.connected else { return [] }
        self.connected = connected
        restartGeneration()
        return fill()
    }

    /// Rows were appended to the outbox.
    mutating func appended() -> [Action] {
        mayHaveMore = true
        return fill()
    }

    mutating func fetched(_ records: [OutboxRecord], limit: Int, generation: Int) -> [Action] {
        guard generation == self.generation else { return fill() }
        fetching = false
        if records.count < limit { mayHaveMore = false }
        var batch: [OutboxRecord] = []
        for record in records where record.id > cursor {
            cursor = record.id
            if acknowledged.contains(record.id) { continue }
            inFlight.insert(record.id)
            batch.append(record)
        }
        var actions: [Action] = batch.isEmpty ? [] : [.publish(batch, generation: generation)]
        actions += fill()
        return actions
    }

    /// Reading the outbox failed: try again later.
    mutating func fetchFailed(generation: Int) -> [Action] {
        guard generation == self.generation else { return fill() }
        fetching = false
        paused = true
        return [.resumeLater]
    }

    /// The broker acknowledged `id` (or a QoS 0 publish was sent).
    mutating func acknowledged(_ id: Int64, generation: Int) -> [Action] {
        if generation == self.generation { inFlight.remove(id) }
        if acknowledged.insert(id).inserted { pendingRemoval.append(id) }
        return flushRemovals() + fill()
    }

    /// A publish failed because of the connection (lost, not connected, timed out).
    mutating func failedTransiently(_ id: Int64, generation: Int) -> [Action] {
        guard generation == self.generation else { return [] }
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

    /// Deleting acknowledged rows failed: keep them and try with the next batch.
    mutating func removeFailed(_ ids: [Int64]) -> [Action] {
        removing = false
        pendingRemoval.insert(contentsOf: ids, at: 0)
        paused = true
        return [.resumeLater]
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
        fetching = false
        mayHaveMore = true
    }

    private mutating func fill() -> [Action] {
        guard connected, !paused, !fetching, mayHaveMore else { return [] }
        let room = capacity - inFlight.count
        guard room > 0 else { return [] }
        fetching = true
        return [.fetch(after: cursor, limit: room, generation: generation)]
    }

    private mutating func flushRemovals() -> [Action] {
        guard !removing, !pendingRemoval.isEmpty else { return [] }
        removing = true
        defer { pendingRemoval.removeAll() }
        return [.remove(pendingRemoval)]
    }
}
