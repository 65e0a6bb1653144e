internal import CMosquitto
import Foundation
import Logging
import Synchronization
import Timekeeping

/// What libmosquitto's callbacks reach through the user-data pointer: the event stream to the
/// client actor and the little state the network thread needs about the current attempt.
///
/// Callbacks run on the client's network thread (inside `mosquitto_loop_read`/`_write`).
final class MosquittoCallbackContext: Sendable {
    struct Attempt {
        /// CONNACK accepted on the current connection.
        var connected = false
        /// CONNACK accepted but not yet reported (its session-present flag); see ``reportConnect()``.
        var unreportedConnect: Bool?
        /// CONNACK refused on the current attempt.
        var refusal: MQTTError?
        /// The last error/warning line libmosquitto logged (e.g. OpenSSL's reason).
        var lastProblem: String?
        /// Which check refused the broker's certificate, and OpenSSL's words (``MosquittoTLSVerifier``).
        var certificateRefusal: (check: MQTTTLSCheck, reason: String)?
    }

    let events: AsyncStream<MQTTEvent>.Continuation
    let protocolVersion: MQTTProtocolVersion
    /// Stamps received messages (``MQTTConfiguration/clock``).
    let clock: any BridgeClock
    let attempt = Mutex(Attempt())
    /// The host the broker's TLS certificate must name; nil: not checked (``MosquittoTLSVerifier``).
    let tlsHost = Mutex<String?>(nil)
    /// QoS 1/2 publishes waiting for PUBACK/PUBCOMP, resolved directly from the network thread.
    let inFlight = Mutex(MQTTInFlightTable<MQTTPublishWaiter>())
    private let logger = Logger(label: "mqtt")

    init(
        events: AsyncStream<MQTTEvent>.Continuation, protocolVersion: MQTTProtocolVersion, clock: any BridgeClock
    ) {
        self.events = events
        self.protocolVersion = protocolVersion
        self.clock = clock
    }

    /// Installs the callbacks on `mosq`; they find this object through the user-data pointer.
    static func install(on mosq: OpaquePointer) {
        mosquitto_connect_v5_callback_set(mosq) { _, userData, reasonCode, flags, _ in
            callbackContext(userData).didConnect(reasonCode: reasonCode, flags: flags)
        }
        mosquitto_publish_v5_callback_set(mosq) { _, userData, mid, reasonCode, _ in
            callbackContext(userData).didPublish(mid: mid, reasonCode: reasonCode)
        }
        mosquitto_subscribe_v5_callback_set(mosq) { _, userData, mid, count, granted, _ in
            let values = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
            callbackContext(userData).events.yield(.subscribed(mid: mid, granted: values))
        }
        mosquitto_message_v5_callback_set(mosq) { _, userData, message, properties in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload =
                message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
            var received = MQTTMessage(
                topic: String(cString: topic), payload: payload, qos: MQTTQoS(rawValue: message.qos) ?? .atMostOnce,
                retain: message.retain, properties: MosquittoPropertyList.read(properties))
            let context = callbackContext(userData)
            received.receivedAt = context.clock.date
            context.events.yield(.message(received))
        }
        setLogging(on: mosq, true)
    }

    /// libmosquitto formats a log line for every packet while a log callback is set, so the
    /// network thread listens only while connecting (when TLS and connection problems are logged).
    static func setLogging(on mosq: OpaquePointer, _ enabled: Bool) {
        guard enabled else {
            mosquitto_log_callback_set(mosq, nil)
            return
        }
        mosquitto_log_callback_set(mosq) { _, userData, level, text in
            guard let text else { return }
            callbackContext(userData).didLog(level: level, String(cString: text))
        }
    }

    /// Reports an accepted CONNACK; the network thread calls this after each turn of its loop.
    ///
    /// libmosquitto calls the connect callback *before* it re-sends the QoS 1/2 messages left in
    /// flight by the previous connection (`handle__connack`: callback, then `message__retry_check`).
    /// Reported from the callback, a publish made on `connected` could be queued between the two
    /// and reach the broker ahead of older messages (seen as readings out of order after a broker
    /// restart). Once the turn (`mosquitto_loop_read`) has returned, the re-sends are queued, so anything published
    /// after the event goes out behind them.
    func reportConnect() {
        guard let sessionPresent = attempt.withLock({ $0.unreportedConnect.take() }) else { return }
        events.yield(.connected(sessionPresent: sessionPresent))
    }

    private static func context(_ userData: UnsafeMutableRawPointer?) -> MosquittoCallbackContext {
        // The handle retains the context for as long as libmosquitto can call back (see MosquittoHandle).
        Unmanaged<MosquittoCallbackContext>.fromOpaque(userData!).takeUnretainedValue()
    }

    private func didConnect(reasonCode: Int32, flags: Int32) {
        if reasonCode == 0 {
            attempt.withLock {
                $0.connected = true
                $0.unreportedConnect = flags & 1 != 0
            }
        } else {
            let error = MosquittoResult.connackError(reasonCode, protocolVersion: protocolVersion)
            attempt.withLock { $0.refusal = error }
        }
    }

    private func didPublish(mid: Int32, reasonCode: Int32) {
        guard let waiter = inFlight.withLock({ $0.acknowledgementArrived(mid: mid, reasonCode: reasonCode) }) else {
            return
        }
        Self.resume(waiter, reasonCode: reasonCode)
    }

    /// Resumes a publisher: success, or the MQTT 5 failure reason code as an error.
    static func resume(_ waiter: MQTTPublishWaiter, reasonCode: Int32) {
        waiter.resolve(
            reasonCode >= 0x80 ? .failure(MosquittoResult.reasonError(reasonCode, "publishing")) : .success(()))
    }

    /// Fails every waiting publisher; later publishers fail at once (the client stopped).
    func closeInFlight(_ error: MQTTError) {
        let waiters = inFlight.withLock { $0.close() }
        for waiter in waiters { waiter.resolve(.failure(error)) }
    }

    private func didLog(level: Int32, _ text: String) {
        if level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 {
            attempt.withLock { $0.lastProblem = text }
            logger.debug("libmosquitto: \(text)")
        } else {
            logger.trace("libmosquitto: \(text)")
        }
    }
}

/// The context behind a callback's user-data pointer. The handle retains the context for as long
/// as libmosquitto can call back (see ``MosquittoHandle``), so the unretained read is safe.
private func callbackContext(_ userData: UnsafeMutableRawPointer?) -> MosquittoCallbackContext {
    Unmanaged<MosquittoCallbackContext>.fromOpaque(userData!).takeUnretainedValue()
}
