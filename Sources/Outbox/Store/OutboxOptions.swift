/// How the outbox stores and bounds its queue.
package struct OutboxOptions: Sendable, Hashable {
    /// `PRAGMA synchronous`: `.normal` survives a process crash, `.full` also power loss.
    package var synchronous: OutboxSynchronousMode
    /// Cap on queued entries; the oldest are dropped (reason `.count`) beyond it.
    package var maxMessages: Int
    /// Cap on queued topic + payload bytes; the oldest are dropped (reason `.bytes`) beyond it.
    package var maxBytes: Int
    /// Entries whose sample time is older than this are dropped (reason `.age`).
    package var maxAge: Duration
    /// How long a write waits for another connection's lock before failing with `.locked`.
    package var busyTimeout: Duration
    /// Run `PRAGMA quick_check` at open and move a corrupt file aside.
    package var checkIntegrityOnOpen: Bool
    /// Bytes kept allocated next to the database (`<path>-reserve`) and released when the disk is
    /// full, so acknowledged readings can still be deleted and the WAL checkpointed; the WAL is kept
    /// under half of it. 0 disables the reserve (and leaves SQLite's WAL defaults).
    package var diskReserve: Int

    package init(
        synchronous: OutboxSynchronousMode = .normal, maxMessages: Int = 1_000_000, maxBytes: Int = 268_435_456,
        maxAge: Duration = .seconds(7 * 86_400), busyTimeout: Duration = .seconds(5), checkIntegrityOnOpen: Bool = true,
        diskReserve: Int = 1_048_576
    ) {
        self.synchronous = synchronous
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
        self.maxAge = maxAge
        self.busyTimeout = busyTimeout
        self.checkIntegrityOnOpen = checkIntegrityOnOpen
        self.diskReserve = max(0, diskReserve)
    }
}
