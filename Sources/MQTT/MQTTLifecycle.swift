/// The client's connection lifecycle as a pure state machine: events in, actions out.
///
/// ``MQTTClient`` feeds it what the caller asks (start, stop) and what the network thread
/// reports, and performs the returned actions. No I/O here, so every transition is unit-tested.
struct MQTTLifecycle: Sendable {
    enum Phase: Sendable, Equatable {
        /// No network thread.
        case idle
        /// Started, not yet connected. `failFast`: the first failure stops the client
        /// (``MQTTClient/connect()``); otherwise it retries (``MQTTClient/start()``).
        case starting(failFast: Bool)
        case connected
        /// Connection lost; the network thread retries with backoff.
        case reconnecting
        /// Stop requested (or a fail-fast start failed); waiting for the thread to finish.
        case stopping
    }

    enum Event: Sendable {
        case start(failFast: Bool)
        case attemptStarted
        case connected(sessionPresent: Bool)
        case disconnected(reason: MQTTError?, wasConnected: Bool)
        case stop
        case loopStopped
    }

    enum Action: Sendable, Equatable {
        case startLoop
        case stopLoop
        case publishState(MQTTConnectionState)
        /// Send SUBSCRIBE for every remembered filter (`all`) or only those the broker has not confirmed.
        case resubscribe(all: Bool)
        /// Subscriptions awaiting SUBACK will be re-sent after reconnecting; let their callers go.
        case releasePendingSubscribes
        /// Resolve callers of ``MQTTClient/connect()``: nil = connected.
        case resolveConnectWaiters(MQTTError?)
        /// Fail every publish still waiting for its acknowledgement (the client is stopping).
        case failInFlight(MQTTError)
        /// End every subscription stream.
        case finishSubscriptions
        /// Resolve callers of ``MQTTClient/disconnect()``.
        case resolveStopWaiters
    }

    private(set) var phase: Phase = .idle
    /// Why the client stopped by itself (fail-fast start); nil after a requested stop.
    private var stopReason: MQTTError?

    static let stoppedError = MQTTError(
        .connectionLost, "the client was stopped before the broker acknowledged the message")

    var isRunning: Bool { phase != .idle }

    mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.idle, .start(let failFast)):
            phase = .starting(failFast: failFast)
            stopReason = nil
            return [.startLoop]
        case (_, .start):
            return []  // already running; MQTTClient waits for the outcome instead
        case (.idle, _):
            return event.isStop ? [.resolveStopWaiters] : []
        case (.stopping, .loopStopped):
            phase = .idle
            return [
                .publishState(.disconnected(reason: stopReason)), .failInFlight(Self.stoppedError),
                .finishSubscriptions, .resolveStopWaiters,
            ]
        case (.stopping, _):
            return []
        case (_, .stop):
            phase = .stopping
            return [.stopLoop, .resolveConnectWaiters(Self.stoppedError)]
        case (_, .attemptStarted):
            return [.publishState(.connecting)]
        case (_, .connected(let sessionPresent)):
            phase = .connected
            // SUBSCRIBEs are queued before anyone hears of the connection: whatever a listener
            // publishes in response (the gateway's `online`) reaches the broker after them, so a
            // peer that sees it can send commands at once.
            return [
                .resubscribe(all: !sessionPresent), .publishState(.connected(sessionPresent: sessionPresent)),
                .resolveConnectWaiters(nil),
            ]
        case (.starting(failFast: true), .disconnected(let reason, _)):
            let error = reason ?? MQTTError(.connectionLost, "the connection closed before CONNACK")
            phase = .stopping
            stopReason = error
            return [
                .publishState(.disconnected(reason: error)), .resolveConnectWaiters(error), .stopLoop,
                .releasePendingSubscribes,
            ]
        case (_, .disconnected(let reason, _)):
            if phase == .connected { phase = .reconnecting }
            return [.publishState(.disconnected(reason: reason)), .releasePendingSubscribes]
        case (_, .loopStopped):
            // The thread ended without being asked (it only does so when stopped); treat as stopped.
            phase = .idle
            return [
                .publishState(.disconnected(reason: stopReason)), .failInFlight(Self.stoppedError),
                .finishSubscriptions, .resolveConnectWaiters(Self.stoppedError), .resolveStopWaiters,
            ]
        }
    }
}

extension MQTTLifecycle.Event {
    fileprivate var isStop: Bool {
        if case .stop = self { return true }
        return false
    }
}
