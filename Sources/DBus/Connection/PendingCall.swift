internal import CDBus
import Synchronization

/// Identifies one outgoing call, and remembers whether its task was cancelled (possibly before
/// the connection thread saw the call).
final class CallToken: Sendable {
    private let cancelled = Atomic(false)
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func cancel() { cancelled.store(true, ordering: .releasing) }
}

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

extension LoopState {
    /// Sends `message` and calls `completion` on this thread with the reply.
    func startCall(
        _ message: Message, timeoutMilliseconds: Int32, token: CallToken,
        completion: @escaping (Result<Message, any Error>) -> Void
    ) {
        if token.isCancelled {
            completion(.failure(CancellationError()))
            return
        }
        guard let connection, !finished else {
            completion(.failure(DBusError.connectionClosed))
            return
        }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message.raw, &pending, timeoutMilliseconds) != 0,
            let pending
        else {
            completion(.failure(DBusError.connectionClosed))
            return
        }
        let call = PendingCall(token: token, pending: pending, state: self, completion: completion)
        pendingCalls[ObjectIdentifier(token)] = call
        let box = Unmanaged.passRetained(call).toOpaque()
        guard dbus_pending_call_set_notify(pending, pendingCallNotify, box, releasePendingCall) != 0 else {
            Unmanaged<PendingCall>.fromOpaque(box).release()
            pendingCalls[ObjectIdentifier(token)] = nil
            call.fail(DBusError(.noMemory, "cannot watch the pending call"))
            return
        }
        if dbus_pending_call_get_completed(pending) != 0 { call.completed() }
    }

    func cancelCall(_ token: CallToken) {
        guard let call = pendingCalls.removeValue(forKey: ObjectIdentifier(token)) else { return }
        call.fail(CancellationError())
    }
}

private let pendingCallNotify: DBusPendingCallNotifyFunction = { _, data in
    Unmanaged<PendingCall>.fromOpaque(data!).takeUnretainedValue().completed()
}

private let releasePendingCall: DBusFreeFunction = { data in
    Unmanaged<PendingCall>.fromOpaque(data!).release()
}
