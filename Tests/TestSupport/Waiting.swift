/// Time-bounded waits for tests: a hung test is a failed CI, so every wait has a deadline.

/// Polls `condition` every `interval` until it holds or `timeout` has passed; returns whether it held
/// (checked once more at the deadline).
public func waitUntil(
    timeout: Duration = .seconds(10), interval: Duration = .milliseconds(10), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Runs `body`, giving up with nil after `timeout` (`body` is then cancelled); its errors are rethrown.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T?
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Runs `body`, giving up with nil after `timeout` (`body` is then cancelled).
public func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
