/// Where the client's connection stands; delivered by ``MQTTClient/connectionStates``.
package enum MQTTConnectionState: Sendable, Equatable, CustomStringConvertible {
    /// A connection attempt (TCP, TLS, CONNECT) is under way.
    case connecting
    /// CONNACK accepted. `sessionPresent` is true when the broker resumed a persistent session.
    case connected(sessionPresent: Bool)
    /// Not connected. `reason` is nil after ``MQTTClient/disconnect()`` and before the first
    /// start; otherwise it says why (and the client is retrying unless it was stopped).
    case disconnected(reason: MQTTError?)

    package var isConnected: Bool {
        if case .connected = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .connecting: "connecting"
        case .connected(let sessionPresent): sessionPresent ? "connected (session resumed)" : "connected"
        case .disconnected(let reason?): "disconnected: \(reason.message)"
        case .disconnected(nil): "disconnected"
        }
    }
}
