/// The MQTT protocol version spoken to the broker.
package enum MQTTProtocolVersion: String, Sendable, Hashable, CaseIterable, Codable {
    /// MQTT 3.1.1.
    case v311 = "3.1.1"
    /// MQTT 5.0: reason codes, message properties, session expiry.
    case v5 = "5"
}
