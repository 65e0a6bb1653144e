/// What the outbox does when its disk runs out of space, as a pure state machine (no I/O; the
/// database performs the ``Action``s).
///
/// A full disk must not wedge the queue: deleting acknowledged rows and checkpointing the WAL need
/// a little space themselves. So the outbox keeps a *reserve*: a file of ``reserve`` bytes next to
/// the database, allocated while there is room.
///
/// - The first write that fails for lack of space releases the reserve, *pins* the database at its
///   current page count (new rows may reuse free pages inside the file but not grow it, so the space
///   freed stays for the WAL, i.e. for deletions and checkpoints) and checkpoints the WAL with
///   truncation (a WAL that failed commits left long is shrunk to nothing). Deletions that failed
///   are retried once after that.
/// - Later failures while short only checkpoint again.
/// - Before each append while short, the free space of the file system is looked at: once it
///   reaches ``resumeThreshold`` (twice the reserve, at least 2 MiB) the reserve is allocated again
///   and the database unpinned.
struct OutboxSpacePolicy: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// Delete the reserve file (if it exists).
        case releaseReserve
        /// Stop the database file from growing (`PRAGMA max_page_count` = current page count).
        case pinDatabase
        /// `PRAGMA wal_checkpoint(TRUNCATE)`.
        case checkpoint
        /// Allocate the reserve file again.
        case createReserve
        /// Let the database grow again.
        case unpinDatabase
    }

    /// Bytes kept in the reserve file (0: no reserve).
    let reserve: Int
    /// True from a write that failed for lack of space until enough space is free again.
    private(set) var short = false

    init(reserve: Int) {
        self.reserve = max(0, reserve)
    }

    /// Free bytes the file system must have before the database may grow again.
    var resumeThreshold: Int { 2 * max(reserve, 1_048_576) }

    /// A write failed because the disk (or the pinned database) is full.
    mutating func writeFailedForSpace() -> [Action] {
        guard !short else { return [.checkpoint] }
        short = true
        return [.releaseReserve, .pinDatabase, .checkpoint]
    }

    /// The reserve could not be allocated at open: start short (pinned) until space is free.
    mutating func reserveUnavailable() -> [Action] {
        guard !short else { return [] }
        short = true
        return [.pinDatabase]
    }

    /// Called before an append while ``short``, with the file system's free bytes.
    mutating func spaceObserved(freeBytes: Int) -> [Action] {
        guard short, freeBytes >= resumeThreshold else { return [] }
        short = false
        return reserve > 0 ? [.createReserve, .unpinDatabase] : [.unpinDatabase]
    }
}
