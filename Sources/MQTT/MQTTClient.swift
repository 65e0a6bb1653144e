internal import CMosquitto
import Logging
import Synchronization
import TaskScope

/// An MQTT 3.1.1 / 5.0 client on libmosquitto.
///
/// ```swift
/// let client = MQTTClient(configuration: try MQTTConfiguration(url: "mqtt://127.0.0.1:1883", clientID: "blebridge"))
/// try await client.connect()
/// let commands = try await client.subscribe("blebridge/+/set", qos: .atLeastOnce)
/// try await client.publish(MQTTMessage(topic: "blebridge/hr_strap", text: #"{"heart_rate":72}"#, qos: .atLeastOnce))
/// for await command in commands { … }
/// ```
///
/// **Threads.** A dedicated network thread (not Swift's cooperative pool) resolves, connects,
/// runs TLS and the socket loop, and reconnects with exponential backoff and jitter
/// (``MQTTConfiguration/minimumReconnectDelay`` to ``MQTTConfiguration/maximumReconnectDelay``).
/// libmosquitto's callbacks reach this actor as ordered events through the handle's user-data
/// pointer.
///
/// **Starting.** ``connect()`` waits for the first CONNACK and throws the first failure (and
/// stops the client): use it when a wrong URL or password must be reported at once. ``start()``
/// returns immediately and keeps retrying forever: use it when the broker may be down at start
/// (the gateway keeps buffering). Either way, once connected the client reconnects by itself;
/// ``connectionStates`` shows `connecting` → `connected` → `disconnected(reason:)` → ….
///
/// **Publishing while disconnected** throws ``MQTTError/Code/noConnection`` at once, for every
/// QoS; nothing is queued inside the client. (A QoS 1/2 publish that races with a connection loss
/// the client has not noticed yet is kept by libmosquitto and handled like a message in flight.) Keep unsent messages in the outbox and publish them
/// when ``connectionStates`` says `connected`.
///
/// **Publishing does not enter the actor**: ``publish(_:)`` runs on the caller's executor, hands the
/// message to libmosquitto (thread-safe) and waits for the acknowledgement, which the network thread
/// delivers directly. Many tasks may publish at once.
///
/// **Completion.** `publish` returns for QoS 0 when libmosquitto has queued the packet for the
/// socket (there is no acknowledgement), for QoS 1 on PUBACK, for QoS 2 on PUBCOMP. An MQTT 5
/// failure reason code (e.g. 0x95 packet too large, 0x87 not authorized) throws.
///
/// **In-flight messages at a disconnect** (QoS 1/2 sent, not yet acknowledged) are *resumed*, not
/// failed: libmosquitto keeps them and re-sends them (DUP) right after the next CONNACK, with
/// clean and persistent sessions alike, and their `publish` calls return when that
/// acknowledgement arrives. They fail with ``MQTTError/Code/connectionLost`` only when the client
/// stops (``disconnect()``, or a failing ``connect()``) before they are acknowledged. Cancelling
/// the calling task stops the wait with `CancellationError` (the message may still be delivered).
/// A caller that needs a bound wraps `publish` in its own timeout and treats expiry like a loss.
///
/// **Limits.** Keep fewer than 65,535 QoS 1/2 publishes waiting at once (MQTT message ids are
/// 16-bit; the outbox publisher's window is 64). Call ``disconnect()`` when done: a started client
/// keeps its network thread (and itself) alive until then.
///
/// **Subscriptions** are `AsyncStream`s routed by topic-filter matching (`+`, `#`). With
/// overlapping filters the broker may send a message once per matching subscription, and each copy
/// goes to every matching stream. They are
/// remembered and sent again after every reconnect on which the broker did not resume the
/// session. A stream ends when ``disconnect()`` is called; ending a stream unsubscribes its filter
/// when it was the filter's last stream.
package actor MQTTClient {
    package nonisolated let configuration: MQTTConfiguration

    let logger = Logger(label: "mqtt")
    let states = MQTTStateBroadcaster()
    var lifecycle = MQTTLifecycle()
    var loop: MQTTNetworkLoop?
    /// The network loop while connected, nil otherwise: what ``publish(_:)`` uses without
    /// entering the actor.
    nonisolated let activeConnection = Mutex<MQTTNetworkLoop?>(nil)
    var connectWaiters: [CheckedContinuation<Void, any Error>] = []
    var stopWaiters: [CheckedContinuation<Void, Never>] = []
    var subscriptions: [String: MQTTSubscriptionEntry] = [:]
    var pendingSubscribes: [Int32: MQTTPendingSubscribe] = [:]
    var nextStreamID = 0
    /// The tasks of the current (or last) run of the network loop: the one that carries its
    /// events into this actor. ``disconnect()`` returns once they have ended.
    private var runTasks: TaskScope?

    package init(configuration: MQTTConfiguration) {
        self.configuration = configuration
    }

    /// The current connection state.
    package nonisolated var connectionState: MQTTConnectionState { states.current }

    /// A new stream of connection states, starting with the current one.
    package nonisolated var connectionStates: AsyncStream<MQTTConnectionState> { states.stream() }

    /// Starts the network thread and returns when the broker accepted the connection.
    ///
    /// Throws the first failure (``MQTTError/Code/unreachable``, ``MQTTError/Code/dnsFailure``,
    /// ``MQTTError/Code/tlsFailure``, ``MQTTError/Code/badCredentials``, ``MQTTError/Code/timeout``, …)
    /// and then the client is stopped. Already connected: returns at once; already starting:
    /// waits for that outcome.
    package func connect() async throws {
        if lifecycle.phase == .stopping { await waitUntilStopped() }
        if lifecycle.phase == .connected { return }
        if lifecycle.phase == .idle { try begin(failFast: true) }
        try await withCheckedThrowingContinuation { connectWaiters.append($0) }
    }

    /// Starts the network thread and returns at once; the client connects and reconnects in the
    /// background, forever, until ``disconnect()``. Throws only for an invalid configuration.
    package func start() async throws {
        if lifecycle.phase == .stopping { await waitUntilStopped() }
        if lifecycle.phase == .idle { try begin(failFast: false) }
    }

    /// Sends DISCONNECT (so the broker discards the will), stops the network thread, fails
    /// publishes still waiting for an acknowledgement (``MQTTError/Code/connectionLost``) and ends
    /// every subscription stream. The client can be started again afterwards.
    package func disconnect() async {
        perform(lifecycle.handle(.stop))
        await waitUntilStopped()
        // The loop has stopped: its events end, and so does the task carrying them.
        await runTasks?.close(until: .now + .seconds(1))
    }

    /// Whether no task of the client runs: none started, or the last run ended by ``disconnect()``.
    package var allTasksEnded: Bool { runTasks?.isClosed ?? true }

    /// Test hook: drops the TCP connection without DISCONNECT (the broker then publishes the
    /// will); the client reconnects as after any network failure.
    func dropConnectionForTesting() {
        loop?.dropConnection()
    }

    private func waitUntilStopped() async {
        guard lifecycle.phase != .idle else { return }
        await withCheckedContinuation { stopWaiters.append($0) }
    }

    private func begin(failFast: Bool) throws(MQTTError) {
        try configuration.validate()
        let loop = try MQTTNetworkLoop(configuration: configuration, stopAfterFirstFailure: failFast)
        self.loop = loop
        perform(lifecycle.handle(.start(failFast: failFast)))
        // A run's scope: the previous one's task ended with its loop's events.
        let tasks = TaskScope()
        runTasks = tasks
        tasks.spawn { await self.consume(loop.events) }
    }

    private func consume(_ events: AsyncStream<MQTTEvent>) async {
        for await event in events {
            handle(event)
        }
    }

    private func handle(_ event: MQTTEvent) {
        switch event {
        case .message(let message):
            deliver(message)
        case .subscribed(let mid, let granted):
            completeSubscribe(mid: mid, granted: granted)
        case .attemptStarted:
            perform(lifecycle.handle(.attemptStarted))
        case .connected(let sessionPresent):
            logger.info("MQTT connected", [("broker", "\(configuration.broker)"), ("session", "\(sessionPresent)")])
            perform(lifecycle.handle(.connected(sessionPresent: sessionPresent)))
        case .disconnected(let reason, let wasConnected):
            // The network thread logged it, with the retry delay (``MQTTRetryReport``).
            perform(lifecycle.handle(.disconnected(reason: reason, wasConnected: wasConnected)))
        case .loopStopped:
            perform(lifecycle.handle(.loopStopped))
            loop = nil
        }
    }

    private func perform(_ actions: [MQTTLifecycle.Action]) {
        for action in actions {
            switch action {
            case .startLoop:
                loop?.start()
            case .stopLoop:
                loop?.requestStop()
            case .publishState(let state):
                let connected = state.isConnected ? loop : nil
                activeConnection.withLock { $0 = connected }
                states.publish(state)
            case .resubscribe(let all):
                resubscribe(all: all)
            case .releasePendingSubscribes:
                releasePendingSubscribes()
            case .resolveConnectWaiters(let error):
                let waiters = connectWaiters
                connectWaiters = []
                for waiter in waiters {
                    if let error { waiter.resume(throwing: error) } else { waiter.resume() }
                }
            case .failInFlight(let error):
                loop?.handle.context.closeInFlight(error)
            case .finishSubscriptions:
                finishAllSubscriptions()
            case .resolveStopWaiters:
                let waiters = stopWaiters
                stopWaiters = []
                for waiter in waiters { waiter.resume() }
            }
        }
    }
}
