internal import CMosquitto
import Logging
import Synchronization

/// What libmosquitto's callbacks reach through the user-data pointer: the event stream to the
/// client actor and the little state the network thread needs about the current attempt.
///
/// Callbacks run on the client's network thread (inside `mosquitto_loop`).
final class MosquittoCallbackContext: Sendable {
    struct Attempt {
        /// CONNACK accepted on the current connection.
        var connected = false
        /// CONNACK refused on the current attempt.
        var refusal: MQTTError?
        /// The last error/warning line libmosquitto logged (e.g. OpenSSL's reason).
        var lastProblem: String?
    }

    let events: AsyncStream<MQTTEvent>.Continuation
    let protocolVersion: MQTTProtocolVersion
    let attempt = Mutex(Attempt())
    private let logger = Logger(label: "mqtt")

    init(events: AsyncStream<MQTTEvent>.Continuation, protocolVersion: MQTTProtocolVersion) {
        self.events = events
        self.protocolVersion = protocolVersion
    }

    /// Installs the callbacks on `mosq`; they find this object through the user-data pointer.
    static func install(on mosq: OpaquePointer) {
        mosquitto_connect_v5_callback_set(mosq) { _, userData, reasonCode, flags, _ in
            callbackContext(userData).didConnect(reasonCode: reasonCode, flags: flags)
        }
        mosquitto_publish_v5_callback_set(mosq) { _, userData, mid, reasonCode, _ in
            callbackContext(userData).events.yield(.published(mid: mid, reasonCode: reasonCode))
        }
        mosquitto_subscribe_v5_callback_set(mosq) { _, userData, mid, count, granted, _ in
            let values = granted.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
            callbackContext(userData).events.yield(.subscribed(mid: mid, granted: values))
        }
        mosquitto_message_v5_callback_set(mosq) { _, userData, message, properties in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload =
                message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
            let received = MQTTMessage(
                topic: String(cString: topic), payload: payload, qos: MQTTQoS(rawValue: message.qos) ?? .atMostOnce,
                retain: message.retain, properties: MosquittoPropertyList.read(properties))
            callbackContext(userData).events.yield(.message(received))
        }
        mosquitto_log_callback_set(mosq) { _, userData, level, text in
            guard let text else { return }
            callbackContext(userData).didLog(level: level, String(cString: text))
        }
    }

    private static func context(_ userData: UnsafeMutableRawPointer?) -> MosquittoCallbackContext {
        // The handle retains the context for as long as libmosquitto can call back (see MosquittoHandle).
        Unmanaged<MosquittoCallbackContext>.fromOpaque(userData!).takeUnretainedValue()
    }

    private func didConnect(reasonCode: Int32, flags: Int32) {
        if reasonCode == 0 {
            attempt.withLock { $0.connected = true }
            events.yield(.connected(sessionPresent: flags & 1 != 0))
        } else {
            let error = MosquittoResult.connackError(reasonCode, protocolVersion: protocolVersion)
            attempt.withLock { $0.refusal = error }
        }
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
