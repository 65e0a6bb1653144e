/// Bounds waits on real events by a deadline.
enum Deadline {
    /// Runs `work` until it finishes or `deadline` passes; then `work` is cancelled and not awaited
    /// further (it must end promptly on cancellation).
    static func run(until deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            // A deadline, not synchronisation: the longest the caller waits for `work`.
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }
}
