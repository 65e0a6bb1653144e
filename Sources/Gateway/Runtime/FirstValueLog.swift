import Synchronization

/// A one-shot flag read from the thread that delivers notifications: ``take()`` is true exactly
/// once, for the first value after a subscription (what the "first notification" debug line needs
/// without a lock on the hot path).
final class FirstValueLog: Sendable {
    private let taken = Atomic<Bool>(false)

    /// True for the first caller only.
    func take() -> Bool {
        !taken.load(ordering: .relaxed)
            && taken.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }
}
