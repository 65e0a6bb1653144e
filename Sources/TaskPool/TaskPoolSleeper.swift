internal import CTaskPool
import Synchronization

/// One sleep on the pool's timer thread: resumed by the timer's callback at the deadline, or by
/// the task's cancellation (which takes the callback back when it has not run yet).
final class TaskPoolSleeper: Sendable {
    private enum State {
        case waiting
        case cancelledBeforeArmed
        case armed(CheckedContinuation<Void, any Error>, id: UInt64)
        case done
    }
    private let state = Mutex(State.waiting)

    /// Sleeps `nanoseconds`, or until the task is cancelled (CancellationError).
    static func sleep(nanoseconds: UInt64) async throws {
        let sleeper = TaskPoolSleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                sleeper.arm(continuation, nanoseconds: nanoseconds)
            }
        } onCancel: {
            sleeper.cancel()
        }
    }

    private func arm(_ continuation: CheckedContinuation<Void, any Error>, nanoseconds: UInt64) {
        let cancelled = state.withLock { state -> Bool in
            guard case .waiting = state else {
                state = .done
                return true
            }
            // The timer holds a reference until its callback ran or was taken back; the callback
            // waits for this lock, so it finds the state armed.
            let context = Unmanaged.passRetained(self).toOpaque()
            let id = blebridge_task_pool_schedule(
                nanoseconds,
                { context in
                    guard let context else { return }
                    Unmanaged<TaskPoolSleeper>.fromOpaque(context).takeRetainedValue().fire()
                }, context)
            state = .armed(continuation, id: UInt64(id))
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
    }

    private func fire() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard case .armed(let continuation, _) = state else { return nil }
            state = .done
            return continuation
        }
        continuation?.resume()
    }

    private func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .waiting:
                state = .cancelledBeforeArmed
                return nil
            case .armed(let continuation, let id):
                state = .done
                // Taken back before it ran: the timer's reference is ours to drop.
                if blebridge_task_pool_cancel(id) != 0 { Unmanaged.passUnretained(self).release() }
                return continuation
            case .cancelledBeforeArmed, .done:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
