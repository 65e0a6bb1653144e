import Synchronization

/// A one-shot event any number of tasks wait for: ``fire()`` once, and every wait, past or
/// future, returns. A wait also returns when its task is cancelled.
package final class Signal: Sendable {
    private struct State {
        var fired = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits whose task was cancelled before they stored their continuation.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether ``fire()`` was called.
    package var isFired: Bool { state.withLock { $0.fired } }

    /// Fires the signal (again: nothing); every waiter resumes.
    package func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal has fired, even when the calling task is cancelled (a wait for the
    /// end of work the caller has just cancelled).
    package func waitUntilFired() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters[state.nextID] = continuation
                state.nextID += 1
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Returns once the signal has fired, or once the calling task is cancelled.
    package func wait() async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.fired || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if !state.fired { state.cancelled.insert(id) }
                return nil
            }
            waiter?.resume()
        }
    }
}
