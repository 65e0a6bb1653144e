import Synchronization

/// How many times the link let go of peripherals the advertisement intake gave it (the adapter
/// went off, a reload dropped a device, the stale-cache recovery forgot one). The intake gives the
/// link a device's peripheral with its advertisements, a hop onto the link's thread each; it skips
/// the hop while the advertiser is the same peripheral it gave last and the link let go of none
/// since. Shared by the link (on its thread) and the intake (on the pool).
final class PeripheralReleases: Sendable {
    private let count = Atomic<UInt64>(0)

    /// The link let go of at least one peripheral.
    func record() {
        _ = count.wrappingAdd(1, ordering: .releasing)
    }

    /// The releases so far.
    var current: UInt64 { count.load(ordering: .acquiring) }
}
