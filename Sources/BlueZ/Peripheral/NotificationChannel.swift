import Foundation
import Synchronization

/// The listeners of one characteristic's notifications. Values are fanned out from whichever thread receives
/// them (the `AcquireNotify` socket reader or the manager's signal loop) without an actor hop.
///
/// Values that arrive before the first listener is added are kept for it: the socket reader starts when
/// `AcquireNotify` answers, and a peer that notifies at once (the next value of a streaming sensor) sends
/// while the subscribing call is still on its way back to add its listener (an actor hop, long on a
/// starved machine). Those values were dropped before.
final class NotificationChannel: Sendable {
    typealias Continuation = AsyncThrowingStream<Data, any Error>.Continuation

    /// A stream's continuation, or a handler called on the receiving thread (with the value as `Data`, or as
    /// bytes: `bytes` saves the `Data` on the `AcquireNotify` path, where the value arrives as bytes).
    enum Listener: Sendable {
        case stream(Continuation)
        case handler(onValue: @Sendable (Data) -> Void, onEnd: @Sendable ((any Error)?) -> Void)
        case bytes(onValue: @Sendable ([UInt8]) -> Void, onEnd: @Sendable ((any Error)?) -> Void)

        func yield(_ value: Data) {
            switch self {
            case .stream(let continuation): continuation.yield(value)
            case .handler(let onValue, _): onValue(value)
            case .bytes(let onValue, _): onValue([UInt8](value))
            }
        }

        func finish(throwing error: (any Error)?) {
            switch self {
            case .stream(let continuation): continuation.finish(throwing: error)
            case .handler(_, let onEnd), .bytes(_, let onEnd): onEnd(error)
            }
        }
    }

    private struct State {
        var nextID = 0
        var listeners: [Int: Listener] = [:] {
            // Kept as an array for `yield`, which then takes a reference instead of copying the
            // dictionary's values for every value (an allocation each, issue 20).
            didSet { snapshot = Array(listeners.values) }
        }
        var snapshot: [Listener] = []
        var finished = false
        /// Values received before the first listener came (nil once it came), at most ``earlyLimit``.
        var early: [Data]? = []
    }

    /// The most values kept for the first listener (the oldest are dropped beyond it); more than a
    /// streaming device sends while a subscription is being set up.
    static let earlyLimit = 1024

    private let state = Mutex(State())

    /// Adds a listener; nil when the channel already finished. The first listener gets the values that
    /// arrived before it first, in order, on the calling thread: under the lock, so a value the reader
    /// yields meanwhile waits and comes after them (the listener must not call back into the channel).
    func add(_ listener: Listener) -> Int? {
        state.withLock { state in
            guard !state.finished else { return nil }
            if let early = state.early {
                state.early = nil
                for value in early { listener.yield(value) }
            }
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
        for listener in listeners(keepingEarly: { value }) { listener.yield(value) }
    }

    /// A value lent by the `AcquireNotify` reader for this call: `Data` and `[UInt8]` copies are made
    /// only for listeners that take them, once each.
    func yield(bytes: UnsafeRawBufferPointer) {
        var data: Data?
        var array: [UInt8]?
        for listener in listeners(keepingEarly: { Data(bytes) }) {
            switch listener {
            case .bytes(let onValue, _):
                if array == nil { array = [UInt8](bytes) }
                onValue(array!)
            case .stream, .handler:
                if data == nil { data = Data(bytes) }
                listener.yield(data!)
            }
        }
    }

    /// The listeners to give a value to; none when the value was kept for the first listener.
    private func listeners(keepingEarly value: () -> Data) -> [Listener] {
        state.withLock { state in
            guard state.early == nil || state.finished else {
                if state.early!.count >= Self.earlyLimit { state.early!.removeFirst() }
                state.early!.append(value())
                return []
            }
            return state.snapshot
        }
    }

    /// Ends every listener's stream (with `error`, or normally when nil).
    func finish(throwing error: (any Error)?) {
        let listeners = state.withLock { state in
            state.finished = true
            state.early = nil
            defer { state.listeners.removeAll() }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish(throwing: error) }
    }
}
