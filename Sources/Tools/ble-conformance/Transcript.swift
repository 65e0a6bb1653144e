import Bluetooth
import Foundation
import Synchronization
import Timekeeping

/// The conformance run's record: one JSON line per step on standard output, with the outcome
/// and, for failures, the `BluetoothError` code and the BlueZ error behind it, and the step's
/// wall time in `ms`. Two runs (real bluetoothd in the VM, the simulator) are compared on
/// `step`, `outcome` and `code`.
final class Transcript: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Failed steps so far; also serialises the output lines.
    private let failures = Mutex(0)

    /// Runs a step expected to succeed; `body` returns a short detail for the log.
    func expectSuccess(_ step: String, _ body: () async throws -> String) async {
        let start = ContinuousClock.now
        do {
            let detail = try await body()
            emit(["step": step, "outcome": "ok", "detail": detail], since: start)
        } catch {
            fail(step, error, since: start)
        }
    }

    /// Runs a step expected to fail with `code`.
    func expectError(_ step: String, _ code: BluetoothError.Code, _ body: () async throws -> Void) async {
        let start = ContinuousClock.now
        do {
            try await body()
            emit(["step": step, "outcome": "unexpected-success", "expected": code.rawValue], since: start)
            count()
        } catch let error as BluetoothError where error.code == code {
            emit(
                [
                    "step": step, "outcome": "error", "code": error.code.rawValue,
                    "bluez": error.bluezError?.description ?? "",
                ], since: start)
        } catch {
            fail(step, error, expected: code.rawValue, since: start)
        }
    }

    func fail(_ step: String, _ error: any Error, expected: String? = nil, since start: ContinuousClock.Instant? = nil)
    {
        var fields = ["step": step, "outcome": "failed", "error": "\(error)"]
        if let bluetooth = error as? BluetoothError { fields["code"] = bluetooth.code.rawValue }
        if let expected { fields["expected"] = expected }
        emit(fields, since: start)
        count()
    }

    var failureCount: Int { failures.withLock { $0 } }

    private func count() { failures.withLock { $0 += 1 } }

    private func emit(_ fields: [String: String], since start: ContinuousClock.Instant?) {
        var fields = fields
        if let start {
            let elapsed = ContinuousClock.now - start
            fields["ms"] = String(elapsed.inMilliseconds)
        }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data()
        failures.withLock { _ in
            FileHandle.standardOutput.write(data + Data("\n".utf8))
        }
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        // Polling interval of a conformance tool's wait on a remote peer's state (no event from the peer).
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
