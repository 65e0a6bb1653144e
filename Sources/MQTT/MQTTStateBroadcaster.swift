import Synchronization

/// Fans the connection state out to any number of `AsyncStream`s; each new stream starts with
/// the current state. Repeated identical states are not re-sent.
final class MQTTStateBroadcaster: Sendable {
    private struct State {
        var current: MQTTConnectionState = .disconnected(reason: nil)
        var listeners: [Int: AsyncStream<MQTTConnectionState>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var current: MQTTConnectionState { state.withLock { $0.current } }

    func stream() -> AsyncStream<MQTTConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTConnectionState.self)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.listeners[id] = continuation
            continuation.yield(state.current)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    /// Returns false when `newState` equals the current state (nothing sent).
    @discardableResult
    func publish(_ newState: MQTTConnectionState) -> Bool {
        state.withLock { state in
            guard state.current != newState else { return false }
            state.current = newState
            for listener in state.listeners.values { listener.yield(newState) }
            return true
        }
    }

    deinit {
        state.withLock { state in
            for listener in state.listeners.values { listener.finish() }
        }
    }
}
