import Synchronization

/// Identifies one outgoing call, and remembers whether its task was cancelled (possibly before
/// the connection thread saw the call).
final class CallToken: Sendable {
    private let cancelled = Atomic(false)
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func cancel() { cancelled.store(true, ordering: .releasing) }
}
