/// When the gateway gives the free memory at the heap's top back to the system
/// (``ProcessMemory/releaseHeapTop(keeping:)``, all but ``keptAtTop``): once things have settled
/// after a burst, and at most once a ``spacing``.
///
/// A burst is whatever allocates a lot for a moment and frees it again: a device connected or
/// lost (its GATT objects, the D-Bus replies of its discovery), the adapter back after a power
/// cycle or bluetoothd back after a restart (every object again), the broker back (the outbox's
/// backlog read and published). The heap's top grows to the burst's peak and glibc keeps up to
/// 1 MiB free there (``ProcessMemory/useCompactAllocator()``), so each new peak raised the
/// resident memory for good: the soak's steps of 40–56 kB after a power cycle or a bluetoothd
/// restart (docs/testing.md, "The threads' caches"). Only the top is given back: `malloc_trim`
/// also gives back the free pages inside the heap, which the steady traffic touches again within
/// 15–20 s, so the resident memory dipped by about 190 kB after each (two soaks failed on those
/// dips alone; docs/testing.md, "After a burst"). Never per reading: streaming is no burst.
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
    /// The free memory left at the heap's top (bytes): glibc's own top pad. When the heap grows,
    /// glibc takes 128 KiB more than it needs, which stays untouched until used, so the pages
    /// the steady traffic touches lie within the first part of the free top and a burst's pages
    /// beyond them. Keeping 192 KiB (130–200 kB were free there between bursts) kept the pages
    /// bursts had touched: two soaks stepped by +24 and +44 kB as before (docs/testing.md).
    static let keptAtTop = 128 * 1024

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
