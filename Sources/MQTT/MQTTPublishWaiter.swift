/// Who learns the outcome of one QoS 1/2 publish: a suspended task, or a callback run on the thread
/// that learns it (the client's network thread, or the publishing thread when the acknowledgement
/// came first).
enum MQTTPublishWaiter: Sendable {
    case task(CheckedContinuation<Void, any Error>)
    case callback(@Sendable (Result<Void, MQTTError>) -> Void)

    func resolve(_ result: Result<Void, MQTTError>) {
        switch self {
        case .task(let continuation):
            switch result {
            case .success: continuation.resume()
            case .failure(let error): continuation.resume(throwing: error)
            }
        case .callback(let body):
            body(result)
        }
    }

    /// The waiting task was cancelled (only a task waiter can be).
    func cancel() {
        switch self {
        case .task(let continuation): continuation.resume(throwing: CancellationError())
        case .callback(let body): body(.failure(MQTTLifecycle.stoppedError))
        }
    }
}
