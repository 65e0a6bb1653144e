import Synchronization

/// A continuation that may be resumed from two racing places (the D-Bus reply and a disconnect); only the
/// first resume counts.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumed already (by either side).
    var isResumed: Bool { continuation.withLock { $0 == nil } }

    func resume(with result: Result<Value, any Error>) {
        let taken = continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        taken?.resume(with: result)
    }
}
