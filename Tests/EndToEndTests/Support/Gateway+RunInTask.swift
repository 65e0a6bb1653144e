@testable import Gateway

extension Gateway {
    /// Runs the gateway (``Gateway/run(started:)``) in a task of its own, for a test that starts
    /// and stops one in the test process: returns that task once the start has ended (it ends
    /// after ``Gateway/stop()``), or throws the start's error (the run has stopped the gateway).
    func runInTask() async throws -> Task<Void, Never> {
        let (outcomes, report) = AsyncStream.makeStream(of: Result<Void, any Error>.self)
        let run = Task { await self.run { report.yield($0) } }
        for await outcome in outcomes {
            try outcome.get()
            return run
        }
        // The run reports its start's end before it returns: the stream cannot end without it.
        preconditionFailure("Gateway.run returned without reporting its start")
    }
}
