import Foundation
import Synchronization

/// A clock that moves only when told (``advance(by:)``), for tests of timing: sleepers wake when
/// the time passes their deadline, in deadline order. Starts at the real time it was made at.
package final class ManualClock: BridgeClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var offset: Duration = .zero
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Callers of ``sleeping(atLeast:)`` with the count they wait for.
        var watchers: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Told after every move (``whenMoved(_:)``).
        var movedObservers: [@Sendable () -> Void] = []
    }

    private let origin: ContinuousClock.Instant
    private let originDate: Date
    private let state = Mutex(State())

    package init() {
        origin = .now
        originDate = SystemClock().date
    }

    package var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }
    package var date: Date { originDate + Self.timeInterval(state.withLock { $0.offset }) }
    package var minimumResolution: Duration { .nanoseconds(1) }

    package var followsRealTime: Bool { false }

    package func whenMoved(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.movedObservers.append(body) }
    }

    /// How many tasks sleep on this clock now.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    package func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= origin + state.offset { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome {
                    continuation.resume(with: outcome)
                } else {
                    wakeWatchers()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time on by `duration` and wakes the sleepers whose deadline it passed.
    package func advance(by duration: Duration) {
        let (due, observers) = state.withLock { state -> ([Sleeper], [@Sendable () -> Void]) in
            state.offset += duration
            let now = origin + state.offset
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return (due, state.movedObservers)
        }
        for sleeper in due { sleeper.continuation.resume() }
        for observer in observers { observer() }
    }

    /// Returns once at least `count` tasks sleep on this clock (or the caller is cancelled): a
    /// test advances the time after the timers it means to fire are armed, not after a guess at
    /// how long arming takes.
    package func sleeping(atLeast count: Int) async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.sleepers.count >= count || Task.isCancelled { return true }
                    state.watchers.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let watcher = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.watchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.watchers.remove(at: index).continuation
            }
            watcher?.resume()
        }
    }

    private func wakeWatchers() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            let count = state.sleepers.count
            let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
            state.watchers.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    private static func timeInterval(_ duration: Duration) -> TimeInterval { duration.inSeconds }
}
