/// Bounds waits on real events by a deadline.
enum Deadline {
    /// Runs `work` until it finishes, `deadline` passes or the calling task is cancelled; then
    /// `work` is cancelled and not awaited further. `work` runs in a task of its own (not a child
    /// task): a task group awaits all of its children before it returns, so work that ignores
    /// cancellation (awaiting another task's `value`, a D-Bus call) held the caller past the
    /// deadline.
    static func run(until deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> Void) async {
        let (ended, end) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let worker = Task {
            await work()
            end.finish()
        }
        let timer = Task {
            // A deadline, not synchronisation: the longest the caller waits for `work`.
            try? await Task.sleep(until: deadline, clock: .continuous)
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
}
