internal import CMalloc

/// Giving freed heap memory back to the system.
///
/// glibc's allocator keeps the memory of freed small blocks in its arenas: after thousands of
/// passing advertisers' entries were freed, RSS stays at its peak although the memory is unused.
/// `malloc_trim(0)` returns the free pages of every arena. It walks the arenas (a few milliseconds
/// for tens of megabytes) and takes no lock another thread waits on for long, so it is called
/// rarely: after the advertisers table shrank a lot, and once a burst settled (the gateway's
/// `FreeMemorySchedule`, at most once a minute), never per advertisement or reading.
package enum ProcessMemory {
    /// Returns free heap memory to the system; true when some was released (false where the C
    /// library has no `malloc_trim`).
    @discardableResult
    package static func releaseFreeMemory() -> Bool {
        blebridge_malloc_trim() != 0
    }

    /// Makes glibc's allocator keep less memory it no longer needs; call it first thing in `main`,
    /// before any thread exists (a thread keeps the arena it already has).
    ///
    /// One arena for all threads instead of one per thread (up to 8 per core): the gateway's
    /// threads each allocate and free millions of small, mostly short-lived blocks a day, and every
    /// arena of its own grew its own fragmented extent, so RSS crept up while the live heap stayed
    /// flat (docs/testing.md, "Soak"). A fixed mmap threshold (glibc's default, 128 KiB) keeps
    /// large blocks in `mmap`; a fixed trim threshold of 1 MiB keeps up to 1 MiB free at the heap's
    /// top instead of giving it back with `brk(2)` under the arena's lock at every shrink (dozens
    /// of times a minute at the default, while every thread's `malloc` waited: docs/testing.md,
    /// "The ninth thread"); `releaseFreeMemory()` still gives all of it back. Returns false where
    /// the C library has no `mallopt` (nothing changed) or refused a setting.
    @discardableResult
    package static func useCompactAllocator() -> Bool {
        blebridge_malloc_compact() != 0
    }
}
