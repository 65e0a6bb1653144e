import Foundation
import Synchronization

/// The listeners of one characteristic's notifications. Values are fanned out from whichever thread receives
/// them (the `AcquireNotify` socket reader or the manager's signal loop) without an actor hop.
final class NotificationChannel: Sendable {
    typealias Continuation = AsyncThrowingStream<Data, any Error>.Continuation

    private struct State {
        var nextID = 0
        var listeners: [Int: Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// Adds a listener; nil when the channel already finished.
    func add(_ continuation: Continuation) -> Int? {
        state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.listeners[id] = continuation
            return id
        }
    }

    /// Removes a listener; returns how many remain.
    func remove(_ id: Int) -> Int {
        state.withLock { state in
            state.listeners[id] = nil
            return state.listeners.count
        }
    }

    var listenerCount: Int { state.withLock { $0.listeners.count } }

    func yield(_ value: Data) {
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners { listener.yield(value) }
    }

    /// Ends every listener's stream (with `error`, or normally when nil).
    func finish(throwing error: (any Error)?) {
        let listeners = state.withLock { state in
            state.finished = true
            defer { state.listeners.removeAll() }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish(throwing: error) }
    }
}
