import Synchronization

/// Lets the actor wait until a method handler is about to return (its reply is then queued right
/// after, on the same task), to order a signal after that reply.
final class ReplyGate: Sendable {
    private let opened = Atomic(false)

    func open() { opened.store(true, ordering: .releasing) }

    var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Polls (1 ms) until opened or `timeout`.
    func waitUntilOpen(timeout: Duration) async {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !isOpen, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
