/// Bounds waits on real events by a deadline: the one "timer that cancels work after a deadline".
/// The timer is a deadline, not synchronisation; the wait itself is on the work's end.
package enum Deadline {
    /// The timeout of a wait that something else ends: calls `fire` once `duration` has passed on
    /// `clock`, unless the returned task is cancelled first (the wait ended by its event). For
    /// waits held as continuations (a GATT object appearing, a connect attempt, bluetoothd
    /// activating advertisement monitors), where `run(until:)` has no work to await.
    @discardableResult
    package static func after(
        _ duration: Duration, clock: any BridgeClock = SystemClock(), _ fire: @escaping @Sendable () async -> Void
    ) -> Task<Void, Never> {
        Task {
            // A deadline, not synchronisation: the wait's timeout.
            do { try await clock.sleep(for: duration) } catch { return }
            guard !Task.isCancelled else { return }
            await fire()
        }
    }

    /// Runs `work` until it finishes, `deadline` passes or the calling task is cancelled; then
    /// `work` is cancelled and not awaited further. `work` runs in a task of its own (not a child
    /// task): a task group awaits all of its children before it returns, so work that ignores
    /// cancellation (awaiting another task's `value`, a D-Bus call) held the caller past the
    /// deadline.
    package static func run<C: BridgeClock>(
        until deadline: ContinuousClock.Instant, clock: C = SystemClock(),
        _ work: @escaping @Sendable () async -> Void
    ) async {
        let (ended, end) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let worker = Task {
            await work()
            end.finish()
        }
        let timer = Task {
            // A deadline, not synchronisation: the longest the caller waits for the work.
            try? await clock.sleep(until: deadline, tolerance: nil)
            end.finish()
        }
        await withTaskCancellationHandler {
            for await _ in ended {}
        } onCancel: {
            end.finish()
        }
        worker.cancel()
        timer.cancel()
    }

    /// Awaits `task`'s value, cancelling it once `deadline` passes (its value then is whatever it
    /// makes of the cancellation).
    @discardableResult
    package static func value<T: Sendable, C: BridgeClock>(
        of task: Task<T, Never>, cancellingAt deadline: ContinuousClock.Instant, clock: C = SystemClock()
    ) async -> T {
        let timer = Task {
            // A deadline, not synchronisation: the longest the caller waits for the work.
            try? await clock.sleep(until: deadline, tolerance: nil)
            task.cancel()
        }
        let value = await task.value
        timer.cancel()
        return value
    }

    /// Awaits every task in `tasks`, cancelling those still running once `deadline` passes.
    package static func all<C: BridgeClock>(
        _ tasks: [Task<Void, Never>], cancellingAt deadline: ContinuousClock.Instant, clock: C = SystemClock()
    ) async {
        let timer = Task {
            // A deadline, not synchronisation: the longest the caller waits for the work.
            try? await clock.sleep(until: deadline, tolerance: nil)
            for task in tasks { task.cancel() }
        }
        for task in tasks { await task.value }
        timer.cancel()
    }
}
