#if canImport(Glibc)
    import Glibc
#endif

extension ProcessMemory {
    /// glibc's allocator settings the gateway starts with (`GLIBC_TUNABLES`, read by glibc only
    /// when a process starts): per-thread caches of freed blocks kept only for blocks up to 256
    /// bytes (glibc's default: 1,032). Why: with one arena for every thread, a block one thread
    /// allocates and another frees (a reading decoded on the notify thread, stored and freed on
    /// the outbox's) goes into the freeing thread's cache, where only that thread can use it
    /// again; with nine threads each caching up to 7 blocks of each of 64 sizes, the caches filled
    /// over hours, and the heap grew beside them to serve the other threads (+2 kB a reconnect or
    /// power cycle, on and on: docs/testing.md, "The threads' caches").
    package static let allocatorTunables = "glibc.malloc.tcache_max=256"

    /// The variable that tells a process started with ``allocatorTunables`` that it need not
    /// start again: set before the `exec`, so a glibc that drops the tunables (a secure-execution
    /// start) cannot make it start over and over.
    package static let tunedMarker = "BLEBRIDGE_ALLOCATOR_TUNED"

    /// The `GLIBC_TUNABLES` value to start again with, or nil when nothing is to be done: the
    /// process started again already (`marked`), or the variable already sets glibc's
    /// per-thread cache (the user's choice, kept as it is).
    package static func tunables(adding current: String?, marked: Bool) -> String? {
        if marked { return nil }
        guard let current, !current.isEmpty else { return allocatorTunables }
        if current.contains("glibc.malloc.tcache_") { return nil }
        return current + ":" + allocatorTunables
    }

    /// Starts the process image again (`exec`, same PID and arguments) with
    /// ``allocatorTunables`` in `GLIBC_TUNABLES`, since glibc reads them only at a process's
    /// start; call it first thing in `main`, before any thread exists. Returns when nothing is to
    /// be done or the `exec` failed (no `/proc`): the gateway then runs with glibc's defaults.
    package static func startWithTunedAllocator() {
        #if canImport(Glibc)
            let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
            guard let value = tunables(adding: current, marked: getenv(tunedMarker) != nil) else { return }
            setenv(tunedMarker, "1", 1)
            setenv("GLIBC_TUNABLES", value, 1)
            execv("/proc/self/exe", CommandLine.unsafeArgv)
            // Not started again: GLIBC_TUNABLES as it was for any child process; the marker stays
            // (this process does not try again, and a child need not either).
            if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
        #endif
    }
}
