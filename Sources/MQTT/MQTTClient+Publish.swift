internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MQTTClient {
    /// QoS 1 and 2 publishes of the current connection waiting for their acknowledgement (0
    /// without a connection): registered once `publish` has handed the message to libmosquitto.
    package nonisolated var publishesAwaitingAcknowledgement: Int {
        activeConnection.withLock { $0 }?.handle.context.inFlight.withLock { $0.waitingCount } ?? 0
    }

    /// Publishes `message`; see the type's documentation for when this returns and what happens
    /// while disconnected (throws ``MQTTError/Code/noConnection`` at once).
    ///
    /// Throws ``MQTTError/Code/invalidTopic`` for wildcards or an empty topic,
    /// ``MQTTError/Code/payloadTooLarge`` when the broker's limit is exceeded (MQTT 5 reason code
    /// or the CONNACK maximum packet size), ``MQTTError/Code/unsupported`` for properties over 3.1.1.
    ///
    /// Runs on the caller's executor, not the client's: `isolation` (SE-0420, the caller's actor by
    /// default) does what `nonisolated(nonsending)` does from Swift 6.2 on, and builds with 6.0.
    package func publish(
        _ message: MQTTMessage, isolation: isolated (any Actor)? = #isolation
    ) async throws {
        let (context, messageID) = try hand(message)
        if message.qos == .atMostOnce {
            _ = context.inFlight.withLock { $0.publisherArrived(mid: messageID, waiter: nil) }
            return
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                Self.wait(for: messageID, in: context, waiter: .task(continuation))
                // A task cancelled before this point ran `onCancel` when there was no waiter to fail
                // yet; without this it would wait for an acknowledgement a frozen broker never sends.
                if Task.isCancelled { context.inFlight.withLock { $0.cancel(mid: messageID) }?.cancel() }
            }
        } onCancel: {
            context.inFlight.withLock { $0.cancel(mid: messageID) }?.cancel()
        }
    }

    /// Publishes `message` without suspending: the packet is queued with libmosquitto (and written
    /// when the socket takes it) before this returns, so calls made one after another from one
    /// thread reach the broker in that order.
    ///
    /// `onOutcome` runs exactly once: for QoS 1/2 with the broker's acknowledgement (success, or the
    /// MQTT 5 failure reason as an error) on the client's network thread, or on the calling thread
    /// when the acknowledgement came first; with ``MQTTError/Code/noConnection``-class errors only
    /// when the client stops. For QoS 0 it runs at once, on the calling thread. Keep it short: it
    /// holds up the network thread. Failures known at once are thrown instead (as by
    /// ``publish(_:)``), and `onOutcome` is then not called.
    package nonisolated func publish(
        _ message: MQTTMessage, onOutcome: @escaping @Sendable (Result<Void, MQTTError>) -> Void
    ) throws(MQTTError) {
        let (context, messageID) = try hand(message)
        if message.qos == .atMostOnce {
            _ = context.inFlight.withLock { $0.publisherArrived(mid: messageID, waiter: nil) }
            onOutcome(.success(()))
            return
        }
        Self.wait(for: messageID, in: context, waiter: .callback(onOutcome))
    }

    /// Validates `message` and queues it with libmosquitto; returns the callback context and message id.
    private nonisolated func hand(_ message: MQTTMessage) throws(MQTTError) -> (MosquittoCallbackContext, Int32) {
        try MQTTTopic.validateName(message.topic)
        if configuration.protocolVersion == .v311 && !message.properties.isEmpty {
            throw MQTTError(.unsupported, "publishing to \(message.topic): MQTT 5 properties need protocol version 5")
        }
        guard let loop = activeConnection.withLock({ $0 }) else {
            throw MQTTError(.noConnection, "publishing to \(message.topic): not connected to \(configuration.broker)")
        }
        let properties = message.properties.isEmpty ? nil : try MosquittoPropertyList(message.properties)
        var mid: Int32 = 0
        // `withCString` lends a native string's own bytes; the implicit `String` to pointer
        // conversion copied the topic into a new array for every publish (issue 20).
        let rc = message.topic.withCString { topic in
            message.payload.withUnsafeBytes { payload in
                mosquitto_publish_v5(
                    loop.handle.pointer, &mid, topic, Int32(payload.count), payload.baseAddress,
                    message.qos.rawValue, message.retain, properties?.head)
            }
        }
        let savedErrno = errno
        // MOSQ_ERR_NO_CONN for QoS 1/2 means the socket went away a moment ago: libmosquitto has
        // queued the message anyway and re-sends it after the reconnect, so wait for that
        // acknowledgement like any other message in flight at a disconnect.
        let queuedWhileReconnecting = rc == MOSQ_ERR_NO_CONN.rawValue && message.qos != .atMostOnce
        if rc != MosquittoResult.success && !queuedWhileReconnecting {
            throw MosquittoResult.error(rc, "publishing to \(message.topic)", errnoValue: savedErrno)
        }
        loop.nudge()
        return (loop.handle.context, mid)
    }

    /// Registers `waiter` for `messageID`, resolving it at once when the acknowledgement came first
    /// or the client stopped.
    private nonisolated static func wait(
        for messageID: Int32, in context: MosquittoCallbackContext, waiter: MQTTPublishWaiter
    ) {
        switch context.inFlight.withLock({ $0.publisherArrived(mid: messageID, waiter: waiter) }) {
        case .wait:
            break
        case .resolved(let reasonCode):
            MosquittoCallbackContext.resume(waiter, reasonCode: reasonCode)
        case .closed:
            waiter.resolve(.failure(MQTTLifecycle.stoppedError))
        }
    }
}
