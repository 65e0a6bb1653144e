import Timekeeping

/// A child of a ``TaskScope`` that can be cancelled by itself (a scan window, a timer re-armed,
/// a subscription a reload drops) and awaited. Its work runs in the scope's task group, so the
/// scope's ``TaskScope/close(until:)`` cancels and awaits it like every other child.
package final class ScopedTask: Sendable {
    let cancellation = Signal()
    let end = Signal()

    init() {}

    /// Cancels the work (its `Task.isCancelled` turns true; a sleep or a stream iteration ends).
    package func cancel() { cancellation.fire() }

    /// Whether the work has returned.
    package var isFinished: Bool { end.isFired }

    /// Returns once the work has returned (or the calling task is cancelled).
    package func finished() async { await end.wait() }

    /// Returns once the work has returned, cancelling it when `deadline` passes first (then it
    /// waits for the work to act on the cancellation, as `Deadline.value(of:cancellingAt:)` does).
    package func finished(cancellingAt deadline: ContinuousClock.Instant, clock: any BridgeClock = SystemClock())
        async
    {
        let timer = Deadline.after(deadline - clock.now, clock: clock) { [self] in cancel() }
        await end.wait()
        timer.cancel()
    }

    /// Runs `work` in the calling task (the scope's child) until it returns or ``cancel()`` is called.
    func run(_ work: @escaping @Sendable () async -> Void) async {
        defer { end.fire() }
        guard !cancellation.isFired else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { [cancellation] in await cancellation.wait() }
            _ = await group.next()
            group.cancelAll()
        }
    }
}
