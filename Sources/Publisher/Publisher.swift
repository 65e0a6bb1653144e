import EventLoop
import Foundation
import Logging
import MQTT
import Outbox
import TaskScope
import Timekeeping

/// Joins the outbox and the MQTT client: readings are stored first, then published, and deleted
/// only when the broker acknowledged them.
///
/// ```swift
/// let store = try await OutboxStore(path: "blebridge.sqlite")
/// let publisher = Publisher(store: store, client: client, options: PublisherOptions(window: 64))
/// await publisher.start()
/// try await publisher.submit(OutboxEntry(topic: "blebridge/hr_strap", payload: json, stream: "hr_strap"))
/// publisher.offer([entry])   // the same without waiting for the commit (the gateway's hot path)
/// ```
///
/// - ``submit(_:)-(OutboxEntry)`` returns once the reading is committed to the outbox; it never waits for
///   the broker, so BLE work continues while the broker is down and the outbox grows.
/// - At most ``PublisherOptions/window`` publishes await acknowledgement. Rows are sent in
///   outbox order over one connection, so each stream (device) keeps its order.
/// - While disconnected nothing is sent; publishes already sent are kept by the MQTT client and
///   re-sent after the reconnect, then the backlog follows in order at full window, with new
///   readings queued behind it. A publish that fails for connection reasons restarts the window
///   from the oldest unacknowledged row (at-least-once: the broker may see a reading twice,
///   never out of order and never not at all).
/// - A reading the broker refuses for good is dropped and counted (reason `rejected`).
///
/// Threads: the actor is pinned to the outbox's ``EventLoop`` (its `unownedExecutor` is the store's), so
/// committing, reading and deleting rows are plain calls, and publishes are handed to libmosquitto
/// from that thread. Entries (``offer(_:)``, ``submit(_:)-([OutboxEntry])``) and acknowledgements (from
/// the MQTT network thread) reach it through a ``PublisherInbox`` and a closure run on that thread,
/// never through the cooperative pool: a reading costs one wake-up of the outbox thread, and entries
/// that arrive while it is busy share one transaction (group commit).
///
/// The flow control itself is ``PublishWindow``, a pure state machine; this actor only performs
/// its actions.
package actor Publisher {
    package nonisolated let store: OutboxStore
    package nonisolated let client: MQTTClient
    package nonisolated let options: PublisherOptions
    package nonisolated var unownedExecutor: UnownedSerialExecutor { store.unownedExecutor }
    nonisolated let inbox: PublisherInbox
    let logger: Logger
    var window: PublishWindow
    /// Follows the client's connection state from ``start()`` to ``stop(drainTimeout:)``, in
    /// `watcherScope`, which the stop closes last.
    private var watcher: ScopedTask?
    private var watcherScope: TaskScope?
    /// A stall timer waits on the outbox's thread (one at most; see ``armStallTimer()``).
    private var stallTimerArmed = false
    /// Stalled windows sent again (``PublisherStats/stalls``).
    private var stalls = 0
    var published = 0
    private var storeError: OutboxError?
    /// What the log last said about the outbox: the code of the refusal it announced, nil when it
    /// said nothing or that readings are accepted again (``noteStoreResult(_:)``).
    private var loggedStoreError: OutboxError.Code?
    /// Offered readings the outbox refused for a reason that can pass (locked by another process,
    /// disk full, read-only, …): held here in order, at most ``PublisherOptions/heldLimit``, and
    /// committed ahead of newer readings by the next commit or a retry.
    var held = HeldReadings()
    /// Readings dropped because ``held`` was full (the oldest go first), since start.
    private var heldDropped = 0
    /// Hold drops not yet added to the outbox's persisted counter (reason `held`).
    private var heldDropsUnpersisted = 0
    var heldRetryScheduled = false
    /// The hold overflowed during this refusal (logged once per refusal).
    private var holdFullLogged = false
    private var stopping = false
    /// Memory-first mode's state (nil in durable mode): readings published from memory until acknowledged.
    var memory: MemoryFirstBuffer?
    /// Memory-first mode: the outbox rows of spilled readings, by the id of their memory publish,
    /// until that publish's outcome comes (libmosquitto reports one for every publish: acknowledged,
    /// or failed when the client stops). An acknowledgement deletes the row if it was not sent again.
    var spilledRows: [UInt64: Int64] = [:]
    /// Callers of ``stop(drainTimeout:)`` and ``waitUntilDrained(timeout:)``, woken by ``perform(_:)``
    /// once their condition holds, or by their timeout.
    var waiters: [Int: (condition: WaitCondition, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var nextWaiter = 0
    /// One line per kind of outbox failure per ``storeLogInterval`` at most (a full disk fails every
    /// attempt; unthrottled that was 135–250 lines a second).
    private var storeLogs: [StoreLog: LogThrottle] = [:]
    /// The inbox's other pair of arrays, empty between drains (``drain()``).
    private var inboxSpare = PublisherInbox.Taken(submissions: [], outcomes: [])
    /// The entries of a commit of several hand-overs, gathered in one array whose capacity is kept
    /// (a `flatMap` grew a new one in every such commit: 4 % of the outbox thread at 25,000/s);
    /// empty between commits.
    private var commitEntries: [OutboxEntry] = []
    /// While a drain that will commit handles its outcomes: the acknowledged rows to delete, which
    /// go into the commit's transaction instead of one of their own (nil otherwise).
    private var removalsForCommit: [Int64]?
    /// The outbox loop's clock: the window's stall deadline, acknowledgement batching, the removal
    /// delay and retries are timers on that loop, so a test moves them with a ``ManualClock``.
    let clock: any BridgeClock
    private let sampleTimeProperty: String?

    package init(
        store: OutboxStore, client: MQTTClient, options: PublisherOptions = PublisherOptions(),
        logger: Logger = Logger(label: "publisher")
    ) {
        self.store = store
        self.client = client
        self.options = options
        self.logger = logger
        self.clock = store.loop.clock
        self.inbox = PublisherInbox(batch: max(1, options.window / 4))
        self.window = PublishWindow(
            capacity: options.window, removalBatch: options.removalBatch, foldAfter: options.removalDelay * 2 / 5,
            stallTimeout: options.stallTimeout)
        if case .memoryFirst(let spillAfter) = options.mode {
            self.memory = MemoryFirstBuffer(spillAfter: spillAfter, limit: options.memoryLimit)
        }
        // MQTT 3.1.1 has no properties: sending one would make every publish fail (and every
        // reading be dropped as refused), so the sample-time property is left out there.
        self.sampleTimeProperty =
            client.configuration.protocolVersion == .v5 ? options.sampleTimeProperty : nil
        if let name = options.sampleTimeProperty, client.configuration.protocolVersion != .v5 {
            logger.warning(
                "sample-time user property needs MQTT 5; publishing without it",
                [("property", name), ("protocol", client.configuration.protocolVersion.rawValue)])
        }
    }

    /// Starts following the client's connection state and publishing whenever it is connected.
    /// Start (or connect) the client separately.
    package func start() {
        guard watcher == nil else { return }
        let states = client.connectionStates
        let scope = TaskScope()
        watcherScope = scope
        // Weak: a publisher nobody holds any more stops by itself (its scope then ends the task).
        watcher = scope.spawnCancellable { [weak self] in
            for await state in states {
                guard let self else { return }
                await self.connectionChanged(state)
            }
        }
    }

    /// Stops publishing new rows and waits (up to `drainTimeout`) for those in flight to be
    /// acknowledged and deleted. Whatever is not acknowledged stays in the outbox.
    package func stop(drainTimeout: Duration = .seconds(5)) async {
        watcher?.cancel()
        watcher = nil
        let watching = watcherScope
        stopping = true
        drain()  // from here on, outcomes wake the thread at once (`stopping` makes them urgent)
        if memory != nil { performMemory(memory?.stop() ?? []) }  // nothing held in memory is lost on a stop
        if !held.isEmpty { commit([]) }
        if !held.isEmpty {
            logger.error(
                "outbox still refuses readings at stop; held readings lost",
                [("count", "\(held.count)"), ("code", storeError?.code.rawValue ?? "?")])
            heldDropped += held.count
            heldDropsUnpersisted += held.count
            held.removeAll()
        }
        persistHeldDrops()
        perform(window.connectionChanged(connected: false, now: clock.now))
        await wait(until: .idle, timeout: drainTimeout)
        // The watcher was cancelled first; this returns once it has ended.
        await watching?.close(until: clock.now + .seconds(1), clock: clock)
    }

    /// Whether no task of the publisher runs: never started, or stopped.
    package var allTasksEnded: Bool { watcherScope?.isClosed ?? true }

    /// Waits (at most `timeout`) until everything committed has been published and deleted, or
    /// until the connection is down: what a stopping gateway lets go out while the broker is there.
    package func waitUntilDrained(timeout: Duration) async {
        drain()  // readings offered before this call are committed first
        await wait(until: .drained, timeout: timeout)
    }

    enum WaitCondition {
        /// Nothing in flight, being read or being deleted (``stop(drainTimeout:)``).
        case idle
        /// Idle with no backlog and nothing held, or disconnected (``waitUntilDrained(timeout:)``).
        case drained
    }

    private func holds(_ condition: WaitCondition) -> Bool {
        switch condition {
        case .idle: window.isIdle
        case .drained:
            !window.connected || (window.isIdle && !window.hasBacklog && held.isEmpty && (memory?.held.isEmpty ?? true))
        }
    }

    private func wait(until condition: WaitCondition, timeout: Duration) async {
        guard !holds(condition) else { return }
        nextWaiter += 1
        let id = nextWaiter
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[id] = (condition, continuation)
            onThread(after: timeout) { $0.waiters.removeValue(forKey: id)?.continuation.resume() }
        }
    }

    /// Wakes the waiters whose condition now holds.
    func wakeWaiters() {
        for (id, waiter) in waiters where holds(waiter.condition) {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Commits `entry` to the outbox, then lets the publisher send it when it can.
    package nonisolated func submit(_ entry: OutboxEntry) async throws(OutboxError) {
        try await submit([entry])
    }

    /// Commits `entries` to the outbox in one transaction, then lets the publisher send them.
    ///
    /// Submits and offers that arrive while a commit is under way are committed together in the
    /// next transaction (group commit), so many devices submitting at once cost one transaction
    /// per round, not one each. A failing group is retried submit by submit, so one bad entry fails
    /// only its own submit.
    package nonisolated func submit(_ entries: [OutboxEntry]) async throws(OutboxError) {
        let result = await withCheckedContinuation { continuation in
            hand(PublisherInbox.Submission(entries: entries, continuation: continuation))
        }
        try result.get()
    }

    /// Hands `entries` over for the next commit and returns at once (no suspension, no task): the
    /// gateway's path for readings. Entries keep the order of the calls. When the outbox refuses
    /// the commit for a reason that can pass (locked, disk full, read-only, …), the readings are
    /// held in memory and committed, still in order, as soon as it accepts writes again (retried
    /// ``PublisherOptions/retryDelay`` after each refusal; readings offered meanwhile join the
    /// held ones without a commit of their own); at most ``PublisherOptions/heldLimit`` are held, and
    /// beyond that the oldest are dropped and counted. ``stats()`` shows the refusal as `storeError`.
    /// Readings refused for good (``OutboxError/Code/entryTooLarge``, a closed store) are logged
    /// and lost.
    package nonisolated func offer(_ entries: [OutboxEntry]) {
        guard !entries.isEmpty else { return }
        hand(PublisherInbox.Submission(entries: entries, continuation: nil))
    }

    package func stats() throws(OutboxError) -> PublisherStats {
        drain()
        return PublisherStats(
            outbox: try withStore { try $0.stats() }, published: published, inFlight: window.inFlight.count,
            connected: window.connected, storeError: storeError, held: held.count, heldDropped: heldDropped,
            heldDropsUnpersisted: heldDropsUnpersisted, inMemory: memory?.held.count ?? 0,
            spilled: memory?.spilled.values.reduce(0, +) ?? 0,
            publishesFromMemory: memory?.publishesFromMemory ?? false,
            stalls: stalls)
    }

    // MARK: - Hand-over from other threads

    private nonisolated func hand(_ submission: PublisherInbox.Submission) {
        wake(inbox.submit(submission))
    }

    /// Runs on the MQTT network thread (or the outbox thread when the outcome was known at once).
    nonisolated func report(_ outcome: PublisherInbox.Outcome) {
        wake(inbox.report(outcome))
    }

    private nonisolated func wake(_ wake: PublisherInbox.Wake) {
        switch wake {
        case .none:
            break
        case .now:
            onThread { $0.drain() }
        case .later:
            onThread(after: options.acknowledgementDelay) { publisher in
                if publisher.inbox.timerFired() { publisher.drain() }
            }
        }
    }

    /// Runs `body` on the outbox's thread (this actor's executor), after `delay` on its clock when given.
    nonisolated func onThread(
        after delay: Duration? = nil, _ body: @escaping @Sendable (isolated Publisher) -> Void
    ) {
        // Straight on the store's loop (this actor's executor): through `store.run` the closure was
        // wrapped once more and entered the store's isolation first, which cost two allocations
        // more per hand-over (`assumeIsolated` allocates for its closure; issue 20).
        let run: @Sendable () -> Void = { self.assumeIsolated { body($0) } }
        if let delay { store.loop.schedule(after: delay, run) } else { store.loop.execute(run) }
    }

    /// Runs `body` on the outbox's thread once its clock reaches `deadline`.
    nonisolated func onThread(
        at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (isolated Publisher) -> Void
    ) {
        store.loop.schedule(at: deadline) { self.assumeIsolated { body($0) } }
    }

    /// Handles everything the inbox gathered: outcomes first (they free room in the window), then
    /// one commit for all entries, publishing what fits at once.
    func drain() {
        // The spare arrays go to the inbox and come back emptied, capacity kept (a drain that
        // re-enters through a handler takes fresh ones).
        var taken = PublisherInbox.Taken(submissions: [], outcomes: [])
        swap(&taken, &inboxSpare)
        inbox.take(into: &taken)
        defer {
            taken.submissions.removeAll(keepingCapacity: true)
            taken.outcomes.removeAll(keepingCapacity: true)
            inboxSpare = taken
        }
        // Deletions the outcomes call for wait for this drain's commit, when it has one: one
        // transaction instead of two (a drain inside a handler adds to the outer one's).
        let folding = removalsForCommit == nil && !taken.submissions.isEmpty && !heldRetryScheduled
        if folding { removalsForCommit = [] }
        for outcome in taken.outcomes { handle(outcome) }
        if memory != nil { taken.submissions = offerFromMemory(taken.submissions) }
        if heldRetryScheduled && taken.submissions.allSatisfy({ $0.continuation == nil }) {
            // The outbox refused the last commit and a retry is due: new readings queue behind the
            // held ones instead of each drain waiting out another refusal (a lock costs the busy
            // timeout, 5 s), which also leaves the thread free for `stats()` (the health topic).
            for submission in taken.submissions { hold(submission) }
        } else if !taken.submissions.isEmpty {
            commit(taken.submissions)
        }
        // Not taken by a commit (none came, or the readings were held): deleted on their own.
        if folding, let ids = removalsForCommit {
            removalsForCommit = nil
            if !ids.isEmpty { remove(ids) }
        }
        // Outcomes wake the thread at once only when something waits for them.
        let urgent = stopping || window.inFlight.count >= options.window || window.hasBacklog
        if inbox.setUrgent(urgent) { wake(.now) }
    }

    /// Commits held readings, in chunks of at most ``heldChunk``, then `submissions` in one transaction.
    /// A hold of thousands committed as one transaction would need that much free space at once: on
    /// a disk with a little room again it never fit, and everything offered behind it was held too.
    func commit(_ submissions: [PublisherInbox.Submission]) {
        while !held.isEmpty {
            let (chunk, memoryIDs) = held.prefix(Self.heldChunk)
            do throws(OutboxError) {
                let records = try withStore { try $0.appendRecords(chunk) }
                held.removeFirst(chunk.count)
                noteStoreResult(.success(()))
                noteSpilledRows(memoryIDs, records)
                perform(window.appended(records, now: clock.now))
            } catch {
                noteStoreResult(.failure(error))
                guard Self.canPass(error) else {
                    held.removeFirst(chunk.count)
                    finish(PublisherInbox.Submission(entries: chunk, continuation: nil), .failure(error))
                    continue
                }
                scheduleHeldRetry()
                for submission in submissions { settle(submission, error) }
                return
            }
        }
        guard !submissions.isEmpty else { return }
        // A deletion the outcomes called for joins the commit, with the acknowledgements that came
        // after it in this drain (they would be the next deletion's); without one due, the
        // acknowledged rows join once the oldest waited `foldAfter` (`PublishWindow.removalsJoiningCommit`).
        var acknowledged: [Int64] = []
        if let deferred = removalsForCommit {
            acknowledged = deferred + window.removalsJoiningCommit(now: clock.now)
            removalsForCommit = nil
        }
        do throws(OutboxError) {
            let records: [OutboxRecord]
            if submissions.count == 1 {
                let entries = submissions[0].entries
                records = try withStore { try $0.appendRecords(entries, removing: acknowledged) }
            } else {
                for submission in submissions { commitEntries.append(contentsOf: submission.entries) }
                // The readings are let go after the commit (the array would hold them until the next).
                defer { commitEntries.removeAll(keepingCapacity: true) }
                let entries = commitEntries
                records = try withStore { try $0.appendRecords(entries, removing: acknowledged) }
            }
            noteStoreResult(.success(()))
            for submission in submissions { finish(submission, .success(())) }
            logSpills(submissions)
            noteSpilledRows(submissions, records)
            if !acknowledged.isEmpty { perform(window.removed(acknowledged)) }
            perform(window.appended(records, now: clock.now))
        } catch {
            noteStoreResult(.failure(error))
            // The deletions went back with the commit: tried again on their own (as a deletion
            // refused by the outbox is) after the retry delay.
            if !acknowledged.isEmpty { perform(window.removeFailed(acknowledged)) }
            guard error.code == .entryTooLarge, submissions.count > 1 else {
                // The whole store refuses writes: every group gets the same answer (trying them one
                // by one would only wait out the busy timeout once per group).
                for submission in submissions { settle(submission, error) }
                return
            }
            // One oversized entry must fail only its own submission.
            for submission in submissions {
                if !held.isEmpty && submission.continuation == nil {
                    hold(submission)  // behind readings already held: order is kept
                    continue
                }
                do throws(OutboxError) {
                    let records = try withStore { try $0.appendRecords(submission.entries) }
                    finish(submission, .success(()))
                    logSpills([submission])
                    noteSpilledRows([submission], records)
                    perform(window.appended(records, now: clock.now))
                } catch {
                    settle(submission, error)
                }
            }
        }
    }

    /// Held readings committed per transaction.
    static let heldChunk = 256

    /// A group the outbox refused: a waiting `submit` learns why; offered readings are held for
    /// the next attempt when the refusal can pass, and otherwise lost (logged).
    private func settle(_ submission: PublisherInbox.Submission, _ error: OutboxError) {
        if submission.continuation == nil && Self.canPass(error) {
            hold(submission)
        } else {
            finish(submission, .failure(error))
        }
    }

    /// Memory-first mode: says which committed submissions were readings spilled from memory.
    private func logSpills(_ committed: [PublisherInbox.Submission]) {
        for submission in committed {
            guard let reason = submission.spilled else { continue }
            logger.info(
                "readings held in memory written to the outbox",
                [("count", "\(submission.entries.count)"), ("reason", reason.rawValue)])
        }
    }

    private func finish(_ submission: PublisherInbox.Submission, _ result: Result<Void, OutboxError>) {
        if let continuation = submission.continuation {
            continuation.resume(returning: result)
        } else if case .failure(let error) = result {
            logger.error(
                "outbox append failed; readings lost",
                [("count", "\(submission.entries.count)"), ("code", error.code.rawValue), ("error", error.message)])
        }
    }

    /// Holds offered readings the outbox refused (with the memory-publish ids of spilled ones),
    /// oldest dropped beyond the limit, and schedules a retry.
    func hold(_ submission: PublisherInbox.Submission) {
        let excess = held.append(submission.entries, published: submission.published, limit: options.heldLimit)
        if excess > 0 {
            if !holdFullLogged {
                holdFullLogged = true
                logger.error(
                    "outbox refuses readings and the memory hold is full; dropping the oldest",
                    [("held", "\(options.heldLimit)"), ("code", storeError?.code.rawValue ?? "?")])
            }
            heldDropped += excess
            heldDropsUnpersisted += excess
        }
        scheduleHeldRetry()
    }

    /// Until `retryDelay` has passed, offered readings are held in memory instead of committed
    /// (each commit would wait out the busy timeout of a lock); then the held ones are committed.
    private func scheduleHeldRetry() {
        guard !heldRetryScheduled else { return }
        heldRetryScheduled = true
        onThread(after: options.retryDelay) { publisher in
            publisher.heldRetryScheduled = false
            if !publisher.held.isEmpty { publisher.commit([]) }
        }
    }

    /// Outbox refusals that can pass without a restart: another process's lock, a full disk, a
    /// read-only file or directory, other SQLite failures.
    static func canPass(_ error: OutboxError) -> Bool {
        switch error.code {
        case .locked, .diskFull, .readOnly, .database: true
        case .corrupt, .schemaTooNew, .entryTooLarge, .cannotOpen, .closed: false
        }
    }

    /// Calls the store: it shares this actor's executor (its thread), so its methods are plain calls here.
    @discardableResult
    func withStore<T: Sendable>(_ body: (isolated OutboxStore) throws -> T) throws(OutboxError) -> T {
        do {
            return try store.assumeIsolated(body)
        } catch let error as OutboxError {
            throw error
        } catch {
            throw OutboxError(.database, "\(error)")
        }
    }

    /// Remembers whether the outbox accepts writes (for the health report); logs each change.
    ///
    /// A change the throttle holds back is logged once its interval has passed, at the next result
    /// that still differs from what the log last said: a refusal that came within 10 s of the
    /// previous one's line used to be left out for good, after an "accepts readings again", so the
    /// log's last word on a disk that had filled up again was that it accepted readings (found by
    /// `make stress`, `DiskFullTests`).
    private func noteStoreResult(_ result: Result<Void, OutboxError>) {
        switch result {
        case .success:
            persistHeldDrops()
            let changed = storeError != nil
            storeError = nil
            holdFullLogged = false
            if let logged = loggedStoreError, changed || storeLogOpen(.recovered),
                let held = admitStoreLog(.recovered)
            {
                logger.notice("outbox accepts readings again", [("after", logged.rawValue)] + Self.repeats(held))
                loggedStoreError = nil
            }
        case .failure(let error):
            let changed = storeError?.code != error.code
            storeError = error
            if loggedStoreError != error.code, changed || storeLogOpen(.refused),
                let held = admitStoreLog(.refused)
            {
                logger.error(
                    "outbox refused readings",
                    [("code", error.code.rawValue), ("error", error.message)] + Self.repeats(held))
                loggedStoreError = error.code
            }
        }
    }

    /// Adds the hold drops counted in memory to the outbox's persisted counter, so `dropped` survives
    /// a restart (issue 19, D9); kept for the next try when the outbox still refuses.
    private func persistHeldDrops() {
        guard heldDropsUnpersisted > 0 else { return }
        let count = heldDropsUnpersisted
        do throws(OutboxError) {
            try withStore { try $0.countDropped(count, reason: .held) }
            heldDropsUnpersisted -= count
        } catch {
            // Still refused: the next accepted write tries again.
        }
    }

    /// The kinds of outbox failure lines, each throttled on its own.
    enum StoreLog: Hashable {
        case refused, recovered, reading, deleting
    }

    /// At most one line of each kind per this interval; the next line says how many were held back.
    static let storeLogInterval: Duration = .seconds(10)

    /// nil: leave the line out. Otherwise log it; the value is how many were left out before it.
    private func admitStoreLog(_ kind: StoreLog) -> Int? {
        storeLogs[kind, default: LogThrottle(interval: Self.storeLogInterval)].admit(at: clock.now)
    }

    /// Whether a line of `kind` would be let through now (nothing counted).
    private func storeLogOpen(_ kind: StoreLog) -> Bool {
        storeLogs[kind].map { $0.wouldAdmit(at: clock.now) } ?? true
    }

    private static func repeats(_ held: Int) -> [(String, String)] {
        held > 0 ? [("suppressed", "\(held)")] : []
    }

    // MARK: - Driving the window

    /// Arms the stall timer for the window's ``PublishWindow/stallDeadline`` unless one waits
    /// already. Progress moves the deadline later without touching the timer: when it fires it
    /// ticks the window, which restarts a stalled window or does nothing, and `perform` arms it
    /// again for the deadline then. So a busy window costs one timer per `stallTimeout`, and an
    /// idle or disconnected one none (this replaced a once-a-second tick).
    private func armStallTimer() {
        guard !stallTimerArmed, !stopping, let deadline = window.stallDeadline else { return }
        stallTimerArmed = true
        // Weak: a publisher nobody holds any more stops by itself.
        store.run(at: deadline) { [weak self] _ in
            self?.assumeIsolated { publisher in
                publisher.stallTimerArmed = false
                guard !publisher.stopping else { return }
                publisher.drain()
                let restart = publisher.window.tick(now: publisher.clock.now)
                if !restart.isEmpty { publisher.stalls += 1 }
                publisher.perform(restart)
            }
        }
    }

    private func connectionChanged(_ state: MQTTConnectionState) {
        drain()
        if memory != nil { performMemory(memory?.connectionChanged(connected: state.isConnected) ?? []) }
        perform(window.connectionChanged(connected: state.isConnected, now: clock.now))
    }

    private func handle(_ outcome: PublisherInbox.Outcome) {
        if outcome.fromMemory {
            memoryOutcome(outcome)
            return
        }
        switch outcome.result {
        case .success:
            published += 1
            perform(window.acknowledged(outcome.id, generation: outcome.generation, now: clock.now))
        case .failure(let error):
            publishFailed(outcome.id, generation: outcome.generation, error: error)
        }
    }

    func perform(_ actions: [PublishWindow.Action]) {
        defer {
            leaveStoreWhenDrained()
            if !waiters.isEmpty { wakeWaiters() }
            armStallTimer()
        }
        for action in actions {
            switch action {
            case .fetch(let after, let limit, let read):
                fetch(after: after, limit: limit, read: read)
            case .publish(let records, let generation):
                // A publish that fails at once (not connected) restarts the generation inside
                // `send`; the rest of this batch must not go out, or a record sent after a quick
                // reconnect would reach the broker ahead of the failed one's replay.
                for record in records {
                    guard generation == window.generation else { break }
                    send(record, generation: generation)
                }
            case .remove(let ids):
                if removalsForCommit != nil { removalsForCommit!.append(contentsOf: ids) } else { remove(ids) }
            case .removeLater:
                onThread(after: options.removalDelay) { $0.perform($0.window.removalDelayElapsed()) }
            case .discard(let ids):
                discard(ids)
            case .resumeLater:
                onThread(after: options.retryDelay) { $0.perform($0.window.resume()) }
            case .retryRemovalLater:
                onThread(after: options.retryDelay) { $0.perform($0.window.removalRetryDue()) }
            }
        }
    }

    private func fetch(after: Int64, limit: Int, read: Int) {
        do throws(OutboxError) {
            let records = try withStore { try $0.next(after: after, limit: limit) }
            perform(window.fetched(records, limit: limit, read: read, now: clock.now))
        } catch {
            if let held = admitStoreLog(.reading) {
                logger.error("reading the outbox failed; retrying", [("error", "\(error)")] + Self.repeats(held))
                loggedStoreError = error.code
            }
            storeError = error
            perform(window.fetchFailed(read: read))
        }
    }

    /// Hands `record` to the client now, from this thread, so the broker sees publishes in outbox
    /// order; the outcome comes back through the inbox.
    private func send(_ record: OutboxRecord, generation: Int) {
        let id = record.id
        do {
            try client.publish(message(for: record.entry)) { [self] result in
                report(PublisherInbox.Outcome(id: id, generation: generation, result: result))
            }
        } catch {
            publishFailed(
                id, generation: generation, error: error, topic: record.entry.topic, stream: record.entry.stream)
        }
    }

    private func publishFailed(
        _ id: Int64, generation: Int, error: MQTTError, topic: String? = nil, stream: String? = nil
    ) {
        if Self.isPermanent(error) {
            logger.error(
                "broker refused a reading; dropping it",
                [("id", "\(id)"), ("topic", topic ?? "?"), ("stream", stream ?? "?"), ("error", error.message)])
            perform(window.failedPermanently(id, generation: generation))
        } else {
            if generation == window.generation {
                logger.debug(
                    "publish failed; resending from the oldest unacknowledged reading", [("error", "\(error)")])
            }
            perform(window.failedTransiently(id, generation: generation))
        }
    }

    private func remove(_ ids: [Int64]) {
        do throws(OutboxError) {
            try withStore { try $0.remove(ids: ids) }
            noteStoreResult(.success(()))
            perform(window.removed(ids))
        } catch {
            // Logged with its code (like a refused commit) when the outbox's trouble starts here:
            // whichever operation meets a lock or a full disk first, the log and health say so.
            if let held = admitStoreLog(.deleting) {
                logger.error(
                    "deleting acknowledged readings failed; retrying",
                    [("code", error.code.rawValue), ("error", "\(error)")] + Self.repeats(held))
                loggedStoreError = error.code
            }
            storeError = error
            // The next commit would meet the same lock: new readings wait in memory meanwhile,
            // which keeps the thread free for `stats()` (the health topic says `locked`).
            if Self.canPass(error) { scheduleHeldRetry() }
            perform(window.removeFailed(ids))
        }
    }

    private func discard(_ ids: [Int64]) {
        do throws(OutboxError) {
            try withStore { try $0.drop(ids: ids, reason: .rejected) }
        } catch {
            logger.error("dropping refused readings failed", [("error", "\(error)")])
        }
        perform(window.discarded(ids))
    }

    // MARK: - Messages

    func message(for entry: OutboxEntry) -> MQTTMessage {
        var properties = MQTTProperties()
        if let name = sampleTimeProperty {
            properties.userProperties.append(MQTTUserProperty(name, Timestamp.iso8601(entry.sampleTime)))
        }
        return MQTTMessage(
            topic: entry.topic, payload: entry.payload, qos: MQTTQoS(entry.qos), retain: entry.retain,
            properties: properties)
    }

    /// Failures that will repeat however often the row is sent.
    static func isPermanent(_ error: MQTTError) -> Bool {
        switch error.code {
        case .payloadTooLarge, .invalidTopic, .notAuthorized, .rejected, .qosNotSupported, .unsupported: true
        default: false
        }
    }
}

extension MQTTQoS {
    init(_ qos: OutboxQoS) {
        switch qos {
        case .atMostOnce: self = .atMostOnce
        case .atLeastOnce: self = .atLeastOnce
        case .exactlyOnce: self = .exactlyOnce
        }
    }
}
