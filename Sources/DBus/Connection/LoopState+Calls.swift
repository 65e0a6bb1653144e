internal import CDBus

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
