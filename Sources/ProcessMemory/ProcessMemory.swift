internal import CMalloc

/// Giving freed heap memory back to the system.
///
/// glibc's allocator keeps the memory of freed small blocks in its arenas: after thousands of
/// passing advertisers' entries were freed, RSS stays at its peak although the memory is unused.
/// `malloc_trim(0)` returns the free pages of every arena. It walks the arenas (a few milliseconds
/// for tens of megabytes) and takes no lock another thread waits on for long, so it is called
/// rarely, after a table shrank a lot, never per advertisement.
public enum ProcessMemory {
    /// Returns free heap memory to the system; true when some was released (false where the C
    /// library has no `malloc_trim`).
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        blebridge_malloc_trim() != 0
    }
}
