internal import CSQLite

extension SQLiteConnection {
    /// SQLite's page caches take their pages one by one, set once per process before the first
    /// open (``init(path:mode:busyTimeout:)`` reads it first); false when SQLite was initialised
    /// before (then nothing changed).
    ///
    /// By default a page cache allocates a block of 20 pages (87 kB at 4 KiB pages) for its first
    /// page and frees it once its pages are gone. The outbox did that at the start of nearly every
    /// transaction, about 90 times a second at 100 readings/s: one 87 kB block, under glibc's mmap
    /// threshold, carved from the heap wherever it fitted, with a header written into each of its
    /// 21 pages. Where it lands moves after a burst (a power cycle, a broker outage), so it kept
    /// touching pages of the heap that had not been resident: `RssAnon` rose in steps of 4–84 kB
    /// that glibc keeps (docs/testing.md, "Soak", "What the steps were"). One page at a time
    /// (4.4 kB each) reuses the same freed blocks.
    static let pagesOneByOne: Bool = blebridge_sqlite3_config_page_cache_without_bulk() == SQLITE_OK

    /// SQLite keeps no allocation statistics, set once per process before the first open like
    /// ``pagesOneByOne``; false when SQLite was initialised before. With them on, every
    /// `sqlite3_malloc` and `sqlite3_free` takes a global mutex to count itself: about seven times a
    /// reading on the outbox thread (issue 20). Nothing here reads those counts.
    static let withoutMemoryStatistics: Bool =
        blebridge_sqlite3_config_without_memory_statistics() == SQLITE_OK

    /// What SQLite's allocation statistics count in use (`sqlite3_memory_used`): 0 while
    /// ``withoutMemoryStatistics`` holds.
    static var countedMemoryBytes: Int64 { sqlite3_memory_used() }

    /// Bytes of page-cache pages SQLite holds from the heap at the moment, in every connection of
    /// the process (`SQLITE_STATUS_PAGECACHE_OVERFLOW`): with pages one by one, every cached page;
    /// with the 20-page block, only the pages beyond it.
    static var pageCacheHeapBytes: Int64 {
        var current: Int64 = 0
        var highest: Int64 = 0
        sqlite3_status64(SQLITE_STATUS_PAGECACHE_OVERFLOW, &current, &highest, 0)
        return current
    }
}
