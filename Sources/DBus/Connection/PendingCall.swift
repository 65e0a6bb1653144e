internal import CDBus

/// A call waiting for its reply: owns the libdbus pending call and the completion.
/// Confined to the connection thread.
final class PendingCall {
    let token: CallToken
    private var pending: OpaquePointer?
    private var completion: ((Result<Message, any Error>) -> Void)?
    private unowned let state: LoopState

    init(
        token: CallToken, pending: OpaquePointer, state: LoopState,
        completion: @escaping (Result<Message, any Error>) -> Void
    ) {
        self.token = token
        self.pending = pending
        self.state = state
        self.completion = completion
    }

    deinit {
        if let pending { dbus_pending_call_unref(pending) }
    }

    /// libdbus completed the call (reply, error reply, time-out or disconnect).
    func completed() {
        state.pendingCalls[ObjectIdentifier(token)] = nil
        guard let pending, let completion else { return }
        self.completion = nil
        let reply = dbus_pending_call_steal_reply(pending)
        release()
        if let reply {
            completion(.success(Message(adopting: reply)))
        } else {
            completion(.failure(DBusError(.noReply, "no reply")))
        }
    }

    /// Ends the call without a reply.
    func fail(_ error: any Error) {
        guard let completion else { return }
        self.completion = nil
        if let pending { dbus_pending_call_cancel(pending) }
        release()
        completion(.failure(error))
    }

    /// Drops our reference to the libdbus pending call as soon as it is done, which breaks the
    /// cycle with the notify user data (libdbus releases that when the pending call is freed).
    private func release() {
        if let pending { dbus_pending_call_unref(pending) }
        pending = nil
    }
}
