/// MQTT quality of service.
package enum MQTTQoS: Int32, Sendable, Hashable, CaseIterable, Codable {
    /// At most once: fire and forget.
    case atMostOnce = 0
    /// At least once: acknowledged by PUBACK.
    case atLeastOnce = 1
    /// Exactly once: acknowledged by PUBCOMP.
    case exactlyOnce = 2
}
