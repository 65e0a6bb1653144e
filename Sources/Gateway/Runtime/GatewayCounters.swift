/// Counters reported on `bridge/health`.
struct GatewayCounters: Sendable {
    var reconnects = 0
    var published = 0
    var commands = 0
    var commandsRefused = 0
}
