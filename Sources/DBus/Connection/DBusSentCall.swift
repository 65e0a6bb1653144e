import Synchronization

/// A method call handed to the connection's thread when it was made, whose reply is awaited later
/// by one task (``DBusConnection/startCall(destination:path:interface:method:arguments:timeout:whenAnswered:)``).
///
/// Calls leave in the order they were started, whichever task awaits them: an actor that starts
/// `Connect` and then `Disconnect` from its own thread can await both replies in child tasks of a
/// ``TaskScope``-like group without the second message overtaking the first, which two tasks each
/// making their call could do.
package final class DBusSentCall: Sendable {
    private enum State {
        /// No outcome yet; the task awaiting ``reply()``, once one does.
        case waiting(CheckedContinuation<Message, any Error>?)
        case answered(Result<Message, any Error>)
        /// ``reply()`` took the outcome.
        case taken
    }

    private let state = Mutex(State.waiting(nil))
    private let token = CallToken()
    private let loop: ConnectionLoop

    init(
        _ message: Message, timeout: Duration, loop: ConnectionLoop,
        whenAnswered: (@Sendable (_ error: DBusErrorName?) -> Void)?
    ) {
        self.loop = loop
        let milliseconds = Int32(clamping: timeout.inMilliseconds)
        let token = self.token
        let accepted = loop.submit { [self] state in
            state.startCall(message, timeoutMilliseconds: max(1, milliseconds), token: token) { outcome in
                if let whenAnswered {
                    switch outcome {
                    case .success(let reply): whenAnswered(reply.replyError()?.name)
                    case .failure(let error): whenAnswered((error as? DBusError)?.name ?? .failed)
                    }
                }
                self.answer(outcome)
            }
        }
        if !accepted { answer(.failure(DBusError.connectionClosed)) }
    }

    /// The reply's arguments, or the error that answered the call: an error reply, `NoReply` after
    /// the call's time-out, `Disconnected` when the connection closed, `CancellationError` when
    /// the call or the awaiting task was cancelled. Called at most once.
    package func reply() async throws -> [DBusValue] {
        let message = try await replyMessage()
        if let error = message.replyError() { throw error }
        return try message.arguments()
    }

    /// The reply message (a method return or an error message), as ``reply()`` waits for it.
    func replyMessage() async throws -> Message {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message, any Error>) in
                let ready = state.withLock { state -> Result<Message, any Error>? in
                    switch state {
                    case .waiting:
                        state = .waiting(continuation)
                        return nil
                    case .answered(let outcome):
                        state = .taken
                        return outcome
                    case .taken:
                        preconditionFailure("DBusSentCall.reply() awaited twice")
                    }
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Abandons the call: its reply is ignored and ``reply()`` throws `CancellationError`.
    package func cancel() {
        token.cancel()
        loop.submit { [token] in $0.cancelCall(token) }
    }

    private func answer(_ outcome: Result<Message, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Message, any Error>? in
            guard case .waiting(let waiter) = state else { return nil }
            state = waiter == nil ? .answered(outcome) : .taken
            return waiter
        }
        waiter?.resume(with: outcome)
    }
}
