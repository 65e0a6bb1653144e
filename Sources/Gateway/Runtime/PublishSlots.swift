import Synchronization

/// A window of publishes awaiting their acknowledgement: one task hands messages to the MQTT
/// client in order, taking a slot for each (``acquire()``), and the client's outcome callback gives
/// it back (``release()``), so up to `count` answers are on the wire at once instead of one per
/// round trip. One task acquires; any thread releases.
final class PublishSlots: Sendable {
    private struct State {
        var free: Int
        /// The acquiring task, waiting for a slot (or, in ``drain()``, for all of them).
        var waiter: CheckedContinuation<Void, Never>?
        /// What the waiter waits for: free slots (1, or `count` when draining).
        var wanted = 1
        var cancelled = false
    }

    let count: Int
    private let state: Mutex<State>

    init(_ count: Int) {
        self.count = max(1, count)
        state = Mutex(State(free: max(1, count)))
    }

    /// Slots taken and not yet given back.
    var inUse: Int { state.withLock { count - $0.free } }

    /// Takes a slot, waiting for one; false when the task was cancelled (no slot taken).
    func acquire() async -> Bool {
        guard await wait(forFree: 1) else { return false }
        return state.withLock {
            $0.free -= 1
            return true
        }
    }

    /// Gives a slot back (a publish was acknowledged, failed, or never left).
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.free = min(count, state.free + 1)
            guard state.free >= state.wanted else { return nil }
            return state.waiter.take()
        }
        waiter?.resume()
    }

    /// Waits until every slot is free (every publish resolved), or the task is cancelled.
    func drain() async {
        _ = await wait(forFree: count)
    }

    /// Waits until `wanted` slots are free; false when cancelled.
    private func wait(forFree wanted: Int) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.cancelled || state.free >= wanted { return true }
                    state.wanted = wanted
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.cancelled = true
                return state.waiter.take()
            }
            waiter?.resume()
        }
        return !state.withLock { $0.cancelled }
    }
}
