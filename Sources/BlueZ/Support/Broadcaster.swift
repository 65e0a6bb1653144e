import Synchronization

/// Fans values out to any number of `AsyncStream` subscribers, from any thread, without an actor hop.
/// New subscribers first get the latest value when `replaysLatest` is set (a state stream starts with the
/// current state).
final class Broadcaster<Element: Sendable>: Sendable {
    private struct State {
        var latest: Element?
        var nextID = 0
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    private let state: Mutex<State>
    private let replaysLatest: Bool

    init(initial: Element? = nil, replaysLatest: Bool) {
        self.state = Mutex(State(latest: initial))
        self.replaysLatest = replaysLatest
    }

    /// A new stream of values from now on (starting with the latest when replaying).
    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(256))
        let id: Int? = state.withLock { state in
            if replaysLatest, let latest = state.latest { continuation.yield(latest) }
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.continuations[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ value: Element) {
        let continuations = state.withLock { state in
            state.latest = value
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.yield(value) }
    }

    func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
