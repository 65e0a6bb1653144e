internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A remembered subscription: its filter's QoS, its streams, whether the broker confirmed it.
struct MQTTSubscriptionEntry {
    var qos: MQTTQoS
    /// False: MQTT 5 Retain Handling 2 (the broker sends no retained messages at SUBSCRIBE).
    var retainedAtSubscribe = true
    var streams: [Int: AsyncStream<MQTTMessage>.Continuation] = [:]
    var confirmed = false
}

/// A SUBSCRIBE waiting for its SUBACK; `caller` is nil for a resubscription after reconnect.
struct MQTTPendingSubscribe {
    var filter: String
    var caller: CheckedContinuation<Void, any Error>?
}

extension MQTTClient {
    /// Subscribes to `filter` (`+` and `#` allowed, `$share/<group>/…` too) and returns a stream of
    /// the matching messages (unbounded buffer: nothing is dropped for a slow reader).
    ///
    /// Subscribe *before* ``connect()``/``start()`` when using a persistent session: the broker
    /// delivers what it kept for the session right after CONNACK, and a message that matches no
    /// stream is dropped (logged at debug).
    ///
    /// When connected, returns after the SUBACK and throws ``MQTTError/Code/rejected`` /
    /// ``MQTTError/Code/notAuthorized`` if the broker refused. When not connected, the
    /// subscription is remembered and sent on the next connection. Throws
    /// ``MQTTError/Code/invalidTopic`` for a malformed filter. A second stream on a filter that is
    /// already subscribed at the same or higher QoS does not re-send SUBSCRIBE, so it does not
    /// receive retained messages again.
    ///
    /// `retainedAtSubscribe` false asks an MQTT 5 broker not to send the filter's retained
    /// messages when the subscription is made (Retain Handling 2, also on resubscription). MQTT
    /// 3.1.1 has no such option: there the broker still sends them, flagged ``MQTTMessage/retain``.
    package func subscribe(
        _ filter: String, qos: MQTTQoS = .atLeastOnce, retainedAtSubscribe: Bool = true
    ) async throws -> AsyncStream<MQTTMessage> {
        try MQTTTopic.validateFilter(filter)
        let (stream, continuation) = AsyncStream.makeStream(of: MQTTMessage.self, bufferingPolicy: .unbounded)
        let id = nextStreamID
        nextStreamID += 1
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.removeStream(filter: filter, id: id) }
        }
        var entry = subscriptions[filter] ?? MQTTSubscriptionEntry(qos: qos, retainedAtSubscribe: retainedAtSubscribe)
        let needsSubscribe = subscriptions[filter] == nil || qos.rawValue > entry.qos.rawValue || !entry.confirmed
        entry.qos = MQTTQoS(rawValue: max(entry.qos.rawValue, qos.rawValue)) ?? qos
        entry.streams[id] = continuation
        subscriptions[filter] = entry
        guard needsSubscribe, lifecycle.phase == .connected else { return stream }
        do {
            try await withCheckedThrowingContinuation { (caller: CheckedContinuation<Void, any Error>) in
                do throws(MQTTError) {
                    let mid = try sendSubscribe(filter: filter, entry: entry)
                    pendingSubscribes[mid] = MQTTPendingSubscribe(filter: filter, caller: caller)
                } catch {
                    caller.resume(throwing: error)
                }
            }
        } catch {
            subscriptions[filter]?.streams.removeValue(forKey: id)
            if subscriptions[filter]?.streams.isEmpty == true { subscriptions[filter] = nil }
            continuation.finish()
            throw error
        }
        return stream
    }

    private func sendSubscribe(filter: String, entry: MQTTSubscriptionEntry) throws(MQTTError) -> Int32 {
        guard let loop else { throw MQTTError(.noConnection, "subscribing to \(filter): not connected") }
        var mid: Int32 = 0
        var options: Int32 = 0
        if !entry.retainedAtSubscribe && configuration.protocolVersion == .v5 {
            options = Int32(MQTT_SUB_OPT_SEND_RETAIN_NEVER.rawValue)
        }
        let rc = mosquitto_subscribe_v5(loop.handle.pointer, &mid, filter, entry.qos.rawValue, options, nil)
        let savedErrno = errno
        if rc != MosquittoResult.success {
            throw MosquittoResult.error(rc, "subscribing to \(filter)", errnoValue: savedErrno)
        }
        loop.nudge()
        return mid
    }

    func completeSubscribe(mid: Int32, granted: [Int32]) {
        guard let pending = pendingSubscribes.removeValue(forKey: mid) else { return }
        let code = granted.first ?? 0x80
        if code >= 0x80 {
            let error = MosquittoResult.reasonError(code, "subscribing to \(pending.filter)")
            if let caller = pending.caller {
                caller.resume(throwing: error)
            } else {
                logger.error("MQTT resubscription refused; ending its streams", [("filter", pending.filter)])
                for stream in subscriptions.removeValue(forKey: pending.filter)?.streams.values ?? [:].values {
                    stream.finish()
                }
            }
            return
        }
        subscriptions[pending.filter]?.confirmed = true
        pending.caller?.resume()
    }

    func resubscribe(all: Bool) {
        for (filter, entry) in subscriptions where all || !entry.confirmed {
            subscriptions[filter]?.confirmed = false
            do {
                let mid = try sendSubscribe(filter: filter, entry: entry)
                pendingSubscribes[mid] = MQTTPendingSubscribe(filter: filter, caller: nil)
            } catch {
                logger.warning("MQTT resubscription failed", [("filter", filter), ("reason", error.message)])
            }
        }
    }

    /// The connection went away before SUBACK: the subscription stays remembered (unconfirmed)
    /// and is sent again after reconnecting; callers waiting for the SUBACK return now.
    func releasePendingSubscribes() {
        let pending = pendingSubscribes
        pendingSubscribes = [:]
        for entry in pending.values { entry.caller?.resume() }
    }

    func deliver(_ message: MQTTMessage) {
        var delivered = false
        for (filter, entry) in subscriptions where MQTTTopic.matches(filter: filter, topic: message.topic) {
            for stream in entry.streams.values { stream.yield(message) }
            delivered = true
        }
        if !delivered {
            logger.debug("MQTT message matches no subscription stream; dropped", [("topic", message.topic)])
        }
    }

    func finishAllSubscriptions() {
        let all = subscriptions
        subscriptions = [:]
        releasePendingSubscribes()
        for entry in all.values {
            for stream in entry.streams.values { stream.finish() }
        }
    }

    private func removeStream(filter: String, id: Int) {
        guard var entry = subscriptions[filter], entry.streams.removeValue(forKey: id) != nil else { return }
        if !entry.streams.isEmpty {
            subscriptions[filter] = entry
            return
        }
        subscriptions[filter] = nil
        if lifecycle.phase == .connected, let loop {
            _ = mosquitto_unsubscribe(loop.handle.pointer, nil, filter)
            loop.nudge()
        }
    }
}
