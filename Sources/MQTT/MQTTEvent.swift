/// What the network thread reports to the client actor, in order.
enum MQTTEvent: Sendable {
    /// A connection attempt begins (DNS, TCP, TLS, CONNECT).
    case attemptStarted
    /// CONNACK accepted.
    case connected(sessionPresent: Bool)
    /// The attempt failed or the connection ended. `reason` is nil for a requested disconnect;
    /// `wasConnected` tells whether CONNACK had been accepted on this connection.
    case disconnected(reason: MQTTError?, wasConnected: Bool)
    /// SUBACK: one granted QoS (or failure reason code ≥ 0x80) per filter.
    case subscribed(mid: Int32, granted: [Int32])
    /// A message arrived on a subscription.
    case message(MQTTMessage)
    /// The network thread has finished; no more events follow.
    case loopStopped
}
