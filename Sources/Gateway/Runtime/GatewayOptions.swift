import ProcessMemory
import Timekeeping

/// Run-time overrides and timings that are not part of `config.json` (set by `blebridge run`
/// flags, `blebridge demo` and tests).
package struct GatewayOptions: Sendable {
    /// D-Bus address to use instead of `bluetooth.bus` (e.g. a private bus with the simulator).
    package var busAddress: String?
    /// Broker URL instead of `mqtt.url`.
    package var brokerURL: String?
    /// Outbox database path instead of `outbox.path`.
    package var outboxPath: String?
    /// How often `bridge/health` is published.
    package var healthInterval: Duration
    /// Delay between Home Assistant announcing `online` and discovery being re-sent.
    package var discoveryDelay: Duration
    /// How long SIGTERM waits for in-flight commands and unacknowledged readings.
    package var drainTimeout: Duration
    /// The MQTT control requests the owner of the gateway reads from ``Gateway/controlRequests``
    /// (`blebridge run`: both; `demo`: reload); the others are answered `not_allowed`.
    package var controlRequests: Set<GatewayControlRequest.Kind> = []
    /// The time the gateway reads: sample timestamps, last seen, availability, command timeouts,
    /// rate limits, the pool's backoff and the periodic sweeps. Tests use a ``ManualClock``. (The
    /// bounds of a shutdown stay in real time, so a stop ends even when a test's clock stands still.)
    package var clock: any BridgeClock = SystemClock()
    /// Gives the allocator's free memory back to the system once things settled after a burst
    /// (``FreeMemorySchedule``): ``ProcessMemory/releaseFreeMemory()``. Tests count the calls.
    package var releaseFreeMemory: @Sendable () -> Void = { ProcessMemory.releaseFreeMemory() }

    package init(
        busAddress: String? = nil, brokerURL: String? = nil, outboxPath: String? = nil,
        healthInterval: Duration = .seconds(30), discoveryDelay: Duration = .seconds(5),
        drainTimeout: Duration = .seconds(5)
    ) {
        self.busAddress = busAddress
        self.brokerURL = brokerURL
        self.outboxPath = outboxPath
        self.healthInterval = healthInterval
        self.discoveryDelay = discoveryDelay
        self.drainTimeout = drainTimeout
    }
}
