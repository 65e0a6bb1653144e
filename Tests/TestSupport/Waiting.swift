/// Time-bounded waits for tests: a hung test is a failed CI, so every wait has a deadline.

/// Polls `condition` every `interval` until it holds or `timeout` has passed; returns whether it held
/// (checked once more at the deadline).
///
/// `timeout` counts the time this test process could run, not wall time. Everything a test awaits
/// (recorded MQTT messages, child-process output, simulator events) reaches it through tasks on
/// Swift's cooperative pool, one thread per core (2 here), which other tests of the same process
/// can hold with synchronous work for seconds. A nap that took more than 5 × `interval` means the
/// pool was starved; it counts as 5 × `interval`, so a starved test does not blame the system
/// under test (which still fails after `timeout`). Without this, two synchronous 11 s tests in the
/// same process made an E2E wait miss a reply the gateway had sent (2 runs in 4).
package func waitUntil(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    var remaining = timeout
    while remaining > .zero {
        if try await condition() { return true }
        let start = clock.now
        try? await Task.sleep(for: interval)
        remaining -= min(clock.now - start, interval * 5)
    }
    return try await condition()
}

/// Sleeps for `duration` of the time this process could run (as `waitUntil` counts it): a nap
/// that took more than 5 × `interval` counts as 5 × `interval`. Returns early when cancelled.
package func sleepRunnable(for duration: Duration, interval: Duration = .milliseconds(10)) async {
    _ = await waitUntil(timeout: duration, interval: interval) { Task.isCancelled }
}

/// Runs `body`, giving up with nil after `timeout` (`body` is then cancelled); its errors are rethrown.
/// `timeout` counts only time this process could run (see `waitUntil`).
package func withDeadline<T: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T?
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            await sleepRunnable(for: timeout)
            try Task.checkCancellation()
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Runs `body`, giving up with nil after `timeout` (`body` is then cancelled).
/// `timeout` counts only time this process could run (see `waitUntil`).
package func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            await sleepRunnable(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
