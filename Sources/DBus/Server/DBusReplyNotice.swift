import Synchronization

/// Tells a method handler's owner when the handler's reply has been queued on the connection.
///
/// Anything sent on the same connection after ``queued()`` returns reaches the caller after that
/// reply (the connection thread sends in submission order). A server uses it to order a signal
/// after a reply, as bluetoothd emits `Connected` false only after answering `Disconnect`.
package final class DBusReplyNotice: Sendable {
    private struct State {
        var isQueued = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the reply has been queued.
    package var isQueued: Bool { state.withLock { $0.isQueued } }

    /// Returns once the reply has been queued (at once if it already was).
    package func queued() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.isQueued { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Called by the server once the reply (or error, or nothing for no-reply calls) was submitted.
    func markQueued() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isQueued = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
