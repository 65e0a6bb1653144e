/// When the gateway gives the allocator's free memory back to the system
/// (``ProcessMemory/releaseFreeMemory()``, `malloc_trim(0)`): once things have settled after a
/// burst, and at most once a ``spacing``.
///
/// A burst is whatever allocates a lot for a moment and frees it again: a device connected or
/// lost (its GATT objects, the D-Bus replies of its discovery), the adapter back after a power
/// cycle or bluetoothd back after a restart (every object again), the broker back (the outbox's
/// backlog read and published). Its blocks take pages the steady traffic never touched, at the
/// heap's top (where glibc keeps up to 1 MiB free, ``ProcessMemory/useCompactAllocator()``) and
/// inside the heap, and those pages stayed resident once freed: the soak's steps of 4–56 kB after
/// a power cycle or a bluetoothd restart (docs/testing.md, "The threads' caches" and "After a
/// burst"). `malloc_trim` gives back the top and every free page inside the heap, so after each
/// burst the resident memory falls back to what the steady traffic uses. It dips below that for
/// 15–20 s (about 190 kB, the free pages the steady traffic touches again), which is why the
/// soak judges its memory by a slope robust to single samples. Giving back the top alone
/// (2026-12-04 to 12-05) left the steps inside the heap: 3 of 4 soaks failed on them. Never per
/// reading: streaming is no burst.
///
/// A plain state machine, advanced with the gateway's clock: ``burst(at:)`` at each such event,
/// ``releaseDue(at:)`` at each availability sweep (every 5 s).
struct FreeMemorySchedule: Sendable {
    /// How long nothing bursty must have happened: a power cycle's reconnections arrive over a
    /// few seconds, and the memory is given back after the last of them.
    static let settle: Duration = .seconds(5)
    /// The least time between two releases: link drops a few seconds apart (a flaky device) give
    /// memory back once a minute, not at every one.
    static let spacing: Duration = .seconds(60)

    private var lastBurst: ContinuousClock.Instant?
    private var lastRelease: ContinuousClock.Instant?

    /// Something bursty happened at `now`.
    mutating func burst(at now: ContinuousClock.Instant) {
        lastBurst = now
    }

    /// True when free memory is to be given back now (and then not again before the next burst
    /// and ``spacing``): a burst happened, nothing bursty for ``settle`` since, and the last
    /// release is ``spacing`` or more ago.
    mutating func releaseDue(at now: ContinuousClock.Instant) -> Bool {
        guard let burst = lastBurst, now - burst >= Self.settle else { return false }
        if let released = lastRelease, now - released < Self.spacing { return false }
        lastBurst = nil
        lastRelease = now
        return true
    }
}
