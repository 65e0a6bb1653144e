/// A request over MQTT that only the process running the gateway can carry out:
/// `bridge/request/config/reload` (re-read the configuration file, as SIGHUP) and
/// `bridge/request/restart`. The gateway yields them on ``Gateway/controlRequests`` when
/// ``GatewayOptions/controlRequests`` allows them, and answers the others `not_allowed`.
package struct GatewayControlRequest: Sendable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        case reload
        case restart
    }

    package let kind: Kind
    /// Answers the request on its response topic: nil for `ok`, else the reason it failed.
    /// A restart is answered `ok` by the gateway before it is yielded; its `answer` does nothing.
    package let answer: @Sendable (_ failure: String?) async -> Void
}
