import Foundation
import Synchronization

/// The listeners of one characteristic's notifications. Values are fanned out from whichever thread receives
/// them (the `AcquireNotify` socket reader or the manager's signal loop) without an actor hop.
final class NotificationChannel: Sendable {
    typealias Continuation = AsyncThrowingStream<Data, any Error>.Continuation

    /// A stream's continuation, or a handler called on the receiving thread.
    enum Listener: Sendable {
        case stream(Continuation)
        case handler(onValue: @Sendable (Data) -> Void, onEnd: @Sendable ((any Error)?) -> Void)

        func yield(_ value: Data) {
            switch self {
            case .stream(let continuation): continuation.yield(value)
            case .handler(let onValue, _): onValue(value)
            }
        }

        func finish(throwing error: (any Error)?) {
            switch self {
            case .stream(let continuation): continuation.finish(throwing: error)
            case .handler(_, let onEnd): onEnd(error)
            }
        }
    }

    private struct State {
        var nextID = 0
        var listeners: [Int: Listener] = [:]
        var finished = false
    }

    private let state = Mutex(State())

    /// Adds a listener; nil when the channel already finished.
    func add(_ listener: Listener) -> Int? {
        state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.listeners[id] = listener
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
