import Synchronization

/// A child of a ``TaskScope`` whose result is awaited (a probe started early and read later, a call
/// that several callers join). Its work runs in the scope's task group like every other child, so
/// the scope's ``TaskScope/close(until:)`` cancels and awaits it.
package final class ScopedValue<Value: Sendable>: Sendable {
    private let task = ScopedTask()
    private let result = Mutex<Value?>(nil)

    init() {}

    /// Cancels the work (its `Task.isCancelled` turns true).
    package func cancel() { task.cancel() }

    /// The work's result once it has returned; nil when it was cancelled before it started, or the
    /// calling task is cancelled first.
    package var value: Value? {
        get async {
            await task.finished()
            return result.withLock { $0 }
        }
    }

    /// The work's result once it has returned, waiting for that even when the calling task is
    /// cancelled (the owner of work it has just cancelled); nil when the work never started.
    package var outcome: Value? {
        get async {
            await task.end.waitUntilFired()
            return result.withLock { $0 }
        }
    }

    /// Runs `work` in the calling task (the scope's child) and keeps its result.
    func run(_ work: @escaping @Sendable () async -> Value) async {
        await task.run { [self] in
            let value = await work()
            result.withLock { $0 = value }
        }
    }
}
