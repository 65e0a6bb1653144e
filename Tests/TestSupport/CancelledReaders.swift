/// Starts `rounds` readers, one after another, of the streams `makeStream` returns, and cancels
/// each 50–500 µs after it starts (while it waits for the next element, or while one is being
/// handed over). Returns the first round whose reader had not ended 10 s after its cancellation,
/// or nil when every one ended. For fan-outs whose streams must end when their reader is
/// cancelled while elements keep arriving (docs/architecture.md, "Tasks": yield outside the lock
/// a stream's end takes).
package func firstCancelledReaderThatDidNotEnd<Element: Sendable>(
    rounds: Int, _ makeStream: () -> AsyncStream<Element>
) async throws -> Int? {
    for round in 0..<rounds {
        let stream = makeStream()
        let reader = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        try await Task.sleep(for: .microseconds(Int.random(in: 50...500)))
        reader.cancel()
        if await withDeadline(.seconds(10), { await reader.value }) == nil { return round }
    }
    return nil
}
