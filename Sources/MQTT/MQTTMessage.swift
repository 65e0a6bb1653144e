import Foundation

/// An application message: what is published, what a subscription delivers, and the last will.
///
/// Two messages are equal when topic, payload, QoS, retain flag and properties are: ``receivedAt``
/// is not part of equality or hashing.
package struct MQTTMessage: Sendable, Hashable {
    package var topic: String
    package var payload: [UInt8]
    package var qos: MQTTQoS
    package var retain: Bool
    /// MQTT 5 properties (empty for 3.1.1).
    package var properties: MQTTProperties
    /// For a message a subscription delivers: when the client's network thread read it from the
    /// socket, before it reached the stream (an actor hop and the reader's task, both on the
    /// cooperative pool, which a busy process can hold for seconds). Nil for a message built here.
    package internal(set) var receivedAt: Date?

    package init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }

    /// A message whose payload is the UTF-8 bytes of `text`.
    package init(
        topic: String, text: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain, properties: properties)
    }

    /// The payload decoded as UTF-8 (invalid sequences replaced).
    package var text: String { String(decoding: payload, as: UTF8.self) }

    package static func == (lhs: MQTTMessage, rhs: MQTTMessage) -> Bool {
        lhs.topic == rhs.topic && lhs.payload == rhs.payload && lhs.qos == rhs.qos && lhs.retain == rhs.retain
            && lhs.properties == rhs.properties
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(topic)
        hasher.combine(payload)
        hasher.combine(qos)
        hasher.combine(retain)
        hasher.combine(properties)
    }
}
