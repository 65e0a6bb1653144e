/// The MQTT quality of service an entry is published with (the outbox does not depend on the
/// MQTT module; the publisher maps this to `MQTTQoS`, whose cases have the same names).
package enum OutboxQoS: Int, Sendable, Hashable, CaseIterable, Codable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2
}
