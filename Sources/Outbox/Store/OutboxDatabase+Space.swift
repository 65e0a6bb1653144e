import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Full-disk handling: performs what ``OutboxSpacePolicy`` decides.
extension OutboxDatabase {
    /// Keeps the WAL small enough that the reserve covers it: checkpoints every half reserve
    /// (instead of SQLite's 4 MB) and truncates the file after a reset only when it grew past what
    /// that many frames take, plus ``walSlackFrames`` for the commit that reached the bound. Without
    /// a reserve SQLite's defaults stay.
    ///
    /// The limit is the WAL's size at the bound, not the pages alone: a frame is a page and its
    /// 24-byte header, so a limit of `pages × page size` sat just under the size every cycle
    /// reached, and each reset cut the file and the next cycle grew it again (an `ftruncate` that
    /// freed blocks, and a file grown again, per checkpoint: 499 in 10 s at 25,000 readings/s,
    /// issue 20).
    static func boundWAL(_ connection: SQLiteConnection, reserve: Int) throws {
        guard reserve > 0 else { return }
        let pageSize = Int(try connection.integer("PRAGMA page_size") ?? 4096)
        let pages = max(16, reserve / 2 / max(512, pageSize))
        try connection.execute("PRAGMA wal_autocheckpoint = \(pages)")
        let limit = walHeaderBytes + (pages + walSlackFrames) * (pageSize + walFrameHeaderBytes)
        _ = try connection.integer("PRAGMA journal_size_limit = \(limit)")
    }

    /// SQLite's WAL format: a 32-byte file header, then frames of a 24-byte header and a page.
    static let walHeaderBytes = 32
    static let walFrameHeaderBytes = 24
    /// Frames past the checkpoint bound kept at a reset: the commit that reaches the bound writes
    /// its frames before the checkpoint runs (a reading's commit writes about three).
    static let walSlackFrames = 16

    /// At open: allocates the reserve when it is missing; a disk too full for it starts the
    /// database pinned.
    func prepareReserve() {
        guard space.reserve > 0 else { return }
        if !Self.allocate(reservePath, bytes: space.reserve) { perform(space.reserveUnavailable()) }
    }

    /// While short of space, lets the database grow again once enough space is free.
    func observeSpace() {
        guard space.short else { return }
        perform(space.spaceObserved(freeBytes: freeBytes()))
    }

    /// Runs `body`; when it fails for lack of space, applies the policy and, with `retry`, runs it once more.
    func whenSpaceRunsOut<T>(retry: Bool, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError where error.code == .full {
            perform(space.writeFailedForSpace())
            guard retry else { throw error }
            return try body()
        }
    }

    /// Free bytes on the file system holding the database, as an unprivileged writer sees them.
    func freeBytes() -> Int {
        var stats = statvfs()
        let directory = (connection.path as NSString).deletingLastPathComponent
        guard statvfs(directory.isEmpty ? "." : directory, &stats) == 0 else { return 0 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    private func perform(_ actions: [OutboxSpacePolicy.Action]) {
        for action in actions {
            switch action {
            case .releaseReserve:
                unlink(reservePath)
            case .pinDatabase:
                if let pages = try? connection.integer("PRAGMA page_count") {
                    _ = try? connection.integer("PRAGMA max_page_count = \(pages)")
                }
            case .checkpoint:
                _ = try? connection.texts("PRAGMA wal_checkpoint(TRUNCATE)")
            case .createReserve:
                // Space may be gone again already: the next full disk then has no reserve to release.
                _ = Self.allocate(reservePath, bytes: space.reserve)
            case .unpinDatabase:
                _ = try? connection.integer("PRAGMA max_page_count = \(unpinnedPageLimit)")
            }
        }
    }

    /// Creates (or completes) the file at `path` with `bytes` really allocated; false when the
    /// space is not there (a partial file is removed).
    static func allocate(_ path: String, bytes: Int) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        var result = posix_fallocate(descriptor, 0, off_t(bytes))
        if result == EOPNOTSUPP || result == EINVAL {
            result = writeZeros(descriptor, bytes: bytes) ? 0 : ENOSPC
        }
        close(descriptor)
        if result != 0 { unlink(path) }
        return result == 0
    }

    /// For file systems without `fallocate`: writes `bytes` zero bytes (and syncs them).
    private static func writeZeros(_ descriptor: Int32, bytes: Int) -> Bool {
        let chunk = [UInt8](repeating: 0, count: 65_536)
        var written = 0
        while written < bytes {
            let count = min(chunk.count, bytes - written)
            let result = chunk.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, count, off_t(written)) }
            guard result > 0 else { return false }
            written += result
        }
        return fsync(descriptor) == 0
    }
}
