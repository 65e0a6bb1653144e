import Synchronization

/// Fans the connection state out to any number of `AsyncStream`s; each new stream starts with
/// the current state. Repeated identical states are not re-sent.
///
/// Streams are yielded to outside `state`'s lock, which a stream's end (`onTermination`) takes:
/// Swift runs a cancelled reader's handlers holding that task's status lock, and a yield that
/// resumes the reader takes the same lock, so yielding under `state` could deadlock against a
/// reader being cancelled (the same deadlock hung `SignalHub`, `SignalEventsTests`). `delivery`,
/// which no stream's end takes, keeps the states in order for every stream.
final class MQTTStateBroadcaster: Sendable {
    private struct State {
        var current: MQTTConnectionState = .disconnected(reason: nil)
        var listeners: [Int: AsyncStream<MQTTConnectionState>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())
    /// Held while yielding, so that states reach every stream in the order they were published.
    private let delivery = Mutex(())

    var current: MQTTConnectionState { state.withLock { $0.current } }

    func stream() -> AsyncStream<MQTTConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTConnectionState.self)
        let id = delivery.withLock { _ in
            let (id, current) = state.withLock { state in
                let id = state.nextID
                state.nextID += 1
                state.listeners[id] = continuation
                return (id, state.current)
            }
            continuation.yield(current)
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
        delivery.withLock { _ in
            let listeners = state.withLock { state -> [AsyncStream<MQTTConnectionState>.Continuation]? in
                guard state.current != newState else { return nil }
                state.current = newState
                return Array(state.listeners.values)
            }
            guard let listeners else { return false }
            for listener in listeners { listener.yield(newState) }
            return true
        }
    }

    deinit {
        let listeners = state.withLock { Array($0.listeners.values) }
        for listener in listeners { listener.finish() }
    }
}
