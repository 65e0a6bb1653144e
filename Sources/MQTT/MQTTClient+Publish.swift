internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MQTTClient {
    /// Publishes `message`; see the type's documentation for when this returns and what happens
    /// while disconnected (throws ``MQTTError/Code/noConnection`` at once).
    ///
    /// Throws ``MQTTError/Code/invalidTopic`` for wildcards or an empty topic,
    /// ``MQTTError/Code/payloadTooLarge`` when the broker's limit is exceeded (MQTT 5 reason code
    /// or the CONNACK maximum packet size), ``MQTTError/Code/unsupported`` for properties over 3.1.1.
    public nonisolated(nonsending) func publish(_ message: MQTTMessage) async throws {
        try MQTTTopic.validateName(message.topic)
        if configuration.protocolVersion == .v311 && !message.properties.isEmpty {
            throw MQTTError(.unsupported, "publishing to \(message.topic): MQTT 5 properties need protocol version 5")
        }
        guard let loop = activeConnection.withLock({ $0 }) else {
            throw MQTTError(.noConnection, "publishing to \(message.topic): not connected to \(configuration.broker)")
        }
        let properties = message.properties.isEmpty ? nil : try MosquittoPropertyList(message.properties)
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { payload in
            mosquitto_publish_v5(
                loop.handle.pointer, &mid, message.topic, Int32(payload.count), payload.baseAddress,
                message.qos.rawValue, message.retain, properties?.head)
        }
        let savedErrno = errno
        // MOSQ_ERR_NO_CONN for QoS 1/2 means the socket went away a moment ago: libmosquitto has
        // queued the message anyway and re-sends it after the reconnect, so wait for that
        // acknowledgement like any other message in flight at a disconnect.
        let queuedWhileReconnecting = rc == MOSQ_ERR_NO_CONN.rawValue && message.qos != .atMostOnce
        if rc != MosquittoResult.success && !queuedWhileReconnecting {
            throw MosquittoResult.error(rc, "publishing to \(message.topic)", errnoValue: savedErrno)
        }
        let context = loop.handle.context
        let messageID = mid
        if message.qos == .atMostOnce {
            _ = context.inFlight.withLock { $0.publisherArrived(mid: messageID, waiter: nil) }
            return
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                switch context.inFlight.withLock({ $0.publisherArrived(mid: messageID, waiter: waiter) }) {
                case .wait:
                    break
                case .resolved(let reasonCode):
                    MosquittoCallbackContext.resume(waiter, reasonCode: reasonCode)
                case .closed:
                    waiter.resume(throwing: MQTTLifecycle.stoppedError)
                }
            }
        } onCancel: {
            context.inFlight.withLock { $0.cancel(mid: messageID) }?.resume(throwing: CancellationError())
        }
    }
}
