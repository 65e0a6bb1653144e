internal import CMosquitto
import EventLoop
import Foundation
import Logging
import Synchronization
import Timekeeping

/// The thread that owns one libmosquitto connection: a named ``EventLoop`` (`blebridge.mqtt`)
/// that connects, watches the socket, reconnects with backoff, and reports everything as
/// ``MQTTEvent``s.
///
/// Nothing here runs on Swift's cooperative pool: DNS, the TCP connect and the TLS handshake (in
/// an attempt's first turn), the socket's reads and writes, pings and the backoff's timers all run
/// on the loop's thread. The client actor calls only libmosquitto's thread-safe operations
/// (publish, subscribe, unsubscribe, disconnect) on the handle; those queue their packet (threaded
/// mode) and ``nudge()`` asks the loop to write it.
///
/// The socket is served through libmosquitto's external-loop API (`mosquitto_loop_read`/`_write`/
/// `_misc`) from a level-triggered watch (readable; writable only while a packet waits for the
/// socket), not through `mosquitto_loop`, which waits on a socket pair that every queued packet
/// writes to. A timer turns the loop every half second for pings, the connect timeout and the
/// stop's bound.
final class MQTTNetworkLoop: Sendable {
    let handle: MosquittoHandle
    let events: AsyncStream<MQTTEvent>
    let configuration: MQTTConfiguration
    /// The `blebridge.mqtt` thread (internal for tests, which hold it to gather a write turn).
    let loop: EventLoop
    private let stopping = Atomic<Bool>(false)
    /// A write turn is queued on the loop: ``nudge()`` queues at most one at a time.
    private let writeQueued = Atomic<Bool>(false)
    /// Packets queued (``nudge()`` calls) since the last turn took the count: a turn with more than
    /// one corks the socket while libmosquitto writes them (``writeCorked(_:)``).
    private let queuedSinceTurn = Atomic<Int>(0)
    /// The attempt and retry state. Only the loop's thread reads or changes it; the lock only
    /// makes that visible to the compiler (never contended).
    private let state: Mutex<State>
    let logger = Logger(label: "mqtt")

    /// Stop by itself after a failed attempt as long as no connection was ever accepted
    /// (``MQTTClient/connect()``), instead of retrying.
    private let stopAfterFirstFailure: Bool

    /// How often the loop turns without traffic: pings (`mosquitto_loop_misc`), the connect
    /// timeout and the stop's bound are checked at this resolution.
    static let tick = Duration.milliseconds(500)
    /// How long a requested stop waits for the DISCONNECT to go out and the socket to close.
    static let stopBound = Duration.seconds(2)

    private struct State {
        var backoff: MQTTReconnectBackoff
        /// `mosquitto_connect_bind_v5` ran once; later attempts use `mosquitto_reconnect`.
        var hostIsSet = false
        var configured = false
        var everConnected = false
        var failuresInRow = 0
        /// The connection being made or used; nil between attempts.
        var attempt: Attempt?
        /// The backoff's timer between attempts.
        var retry: EventLoopTimer?
        var finished = false
    }

    private struct Attempt {
        var watch: FDWatch
        var tick: EventLoopTimer?
        /// The watch asks for `.writable` too (a packet waits for the socket).
        var writing = false
        var connectDeadline: ContinuousClock.Instant
        var stopDeadline: ContinuousClock.Instant?
        /// libmosquitto's log callback is on (until CONNACK: it names TLS and socket problems).
        var logging = true
    }

    init(configuration: MQTTConfiguration, stopAfterFirstFailure: Bool) throws(MQTTError) {
        self.stopAfterFirstFailure = stopAfterFirstFailure
        let (events, continuation) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
        let context = MosquittoCallbackContext(
            events: continuation, protocolVersion: configuration.protocolVersion, clock: configuration.clock)
        self.handle = try MosquittoHandle(
            clientID: configuration.clientID, cleanSession: configuration.cleanSession, context: context)
        self.events = events
        self.configuration = configuration
        state = Mutex(
            State(
                backoff: MQTTReconnectBackoff(
                    minimum: configuration.minimumReconnectDelay, maximum: configuration.maximumReconnectDelay)))
        do {
            // The network's timeouts and backoff follow the real time (the configuration's clock
            // dates received messages only). 1 MiB of stack: OpenSSL's handshake runs here.
            loop = try EventLoop(name: "blebridge.mqtt", clock: SystemClock(), stackSize: 1 << 20)
        } catch {
            throw MQTTError(.outOfMemory, "cannot start the MQTT network loop: \(error)")
        }
    }

    func start() {
        loop.execute { [self] in beginAttempt() }
    }

    /// Asks the loop to send DISCONNECT (no will) and finish; returns at once.
    func requestStop() {
        stopping.store(true, ordering: .releasing)
        _ = mosquitto_disconnect(handle.pointer)
        loop.execute { [self] in stopRequested() }
    }

    /// After a publish, subscribe or unsubscribe from another thread: asks the loop to write the
    /// packet (in threaded mode libmosquitto only queues it). Only the loop's thread asks
    /// `mosquitto_want_write`, which reads libmosquitto's queue without its lock.
    func nudge() {
        queuedSinceTurn.add(1, ordering: .relaxed)
        guard !writeQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        loop.execute { [self] in
            // Cleared before the write: a packet queued during it queues the next turn.
            writeQueued.store(false, ordering: .releasing)
            turn([])
        }
    }

    /// Test hook: shuts the socket down without DISCONNECT, as a crash or network loss would.
    /// On the loop's thread, which alone closes the socket: from another thread the number could
    /// be closed and reused by then.
    func dropConnection() {
        loop.execute { [handle] in
            let fd = mosquitto_socket(handle.pointer)
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }
    var context: MosquittoCallbackContext { handle.context }

    // MARK: On the loop's thread

    /// One connection attempt: configure, connect (blocking: DNS, TCP, TLS), then watch the socket.
    private func beginAttempt() {
        state.withLock { $0.retry = nil }
        guard !isStopping else { return finish() }
        context.attempt.withLock { $0 = .init() }
        context.inFlight.withLock { $0.connectionReset() }
        MosquittoCallbackContext.setLogging(on: handle.pointer, true)
        context.events.yield(.attemptStarted)
        let (configured, hostIsSet) = state.withLock { ($0.configured, $0.hostIsSet) }
        do throws(MQTTError) {
            if !configured {
                try configureOnce()
                state.withLock { $0.configured = true }
            }
            try applyCredentials()
            try connectSocket(first: !hostIsSet)
            state.withLock { $0.hostIsSet = true }
        } catch {
            if error.code != .invalidConfiguration {
                state.withLock { $0.hostIsSet = $0.hostIsSet || $0.configured }
            }
            return endAttempt(error)
        }
        let socket = mosquitto_socket(handle.pointer)
        guard socket >= 0, let watch = loop.watch(fd: socket, interest: .readable, { [self] in turn($0) }) else {
            return endAttempt(
                MQTTError(.noConnection, "connecting to \(configuration.broker): the socket could not be watched"))
        }
        let deadline = loop.clock.now + configuration.connectTimeout
        state.withLock { $0.attempt = Attempt(watch: watch, connectDeadline: deadline) }
        armTick()
        turn([])  // writes the CONNECT libmosquitto queued
    }

    private func armTick() {
        let timer = loop.schedule(after: Self.tick) { [self] in
            guard state.withLock({ $0.attempt != nil }) else { return }
            turn([])
            if state.withLock({ $0.attempt != nil }) { armTick() }
        }
        state.withLock { $0.attempt?.tick = timer }
    }

    /// One turn of the socket loop (what `mosquitto_loop` does, without its socket pair): reads
    /// and writes what is ready, lets libmosquitto send pings and retries, then checks the
    /// attempt's deadlines and what the watch should ask for.
    private func turn(_ readiness: Readiness) {
        guard state.withLock({ $0.attempt != nil }) else { return }  // between attempts: nothing to serve
        let mosq = handle.pointer
        var rc = MosquittoResult.success
        var savedErrno: Int32 = 0
        func run(_ call: () -> Int32) {
            guard rc == MosquittoResult.success else { return }
            rc = call()
            savedErrno = errno
            if rc == MosquittoResult.success && mosquitto_socket(mosq) < 0 { rc = MOSQ_ERR_NO_CONN.rawValue }
        }
        if mosquitto_socket(mosq) < 0 { rc = MOSQ_ERR_NO_CONN.rawValue }
        if !readiness.isDisjoint(with: .readableOrClosed) { run { mosquitto_loop_read(mosq, 1) } }
        // Write when the socket said so, or when a packet was queued (a publish, a PUBACK the read queued).
        let queued = queuedSinceTurn.exchange(0, ordering: .relaxed)
        if readiness.contains(.writable) || (rc == MosquittoResult.success && mosquitto_want_write(mosq)) {
            run { writeCorked(queued > 1) }
        }
        run { mosquitto_loop_misc(mosq) }
        context.reportConnect()
        let attempt = context.attempt.withLock { $0 }
        if attempt.connected && state.withLock({ $0.attempt?.logging == true }) {
            MosquittoCallbackContext.setLogging(on: mosq, false)
            state.withLock { $0.attempt?.logging = false }
        }
        if rc != MosquittoResult.success {
            return endAttempt(failure(rc, errnoValue: savedErrno, attempt))
        }
        let now = loop.clock.now
        if isStopping {
            let deadline = state.withLock { $0.attempt?.stopDeadline }
            if let deadline {
                if now > deadline { return endAttempt(nil) }
            } else {
                state.withLock { $0.attempt?.stopDeadline = now + Self.stopBound }
                _ = mosquitto_disconnect(mosq)
            }
        } else if !attempt.connected, let deadline = state.withLock({ $0.attempt?.connectDeadline }), now > deadline {
            _ = mosquitto_disconnect(mosq)
            return endAttempt(
                MQTTError(
                    .timeout, "connecting to \(configuration.broker): no CONNACK within \(configuration.connectTimeout)"
                ))
        }
        let writing = mosquitto_want_write(mosq)
        let watch = state.withLock { state -> FDWatch? in
            guard state.attempt?.writing != writing else { return nil }
            state.attempt?.writing = writing
            return state.attempt?.watch
        }
        watch?.setInterest(writing ? .readableAndWritable : .readable)
    }

    /// `mosquitto_loop_write`, which sends every queued packet with a `send` of its own. The socket
    /// has `TCP_NODELAY` (a lone publish leaves at once, whatever the broker's delayed ACKs do), so
    /// without a cork each packet of a burst is a TCP segment of its own: at 10,000 readings/s the
    /// MQTT thread's time was mostly the kernel's, per segment (issue 20). With `cork` (more than one
    /// packet queued since the last turn) `TCP_CORK` holds them while libmosquitto writes, and taking
    /// it off sends what is left at once. A socket that is not TCP refuses the option: then no cork.
    private func writeCorked(_ cork: Bool) -> Int32 {
        let fd = mosquitto_socket(handle.pointer)
        let corked = cork && fd >= 0 && Self.setCork(fd, true)
        let result = mosquitto_loop_write(handle.pointer, 1)
        // A failed write may have closed the socket, and the number may name another one by now.
        if corked && mosquitto_socket(handle.pointer) == fd { _ = Self.setCork(fd, false) }
        return result
    }

    private static func setCork(_ fd: Int32, _ on: Bool) -> Bool {
        var value: Int32 = on ? 1 : 0
        return setsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }

    /// The connection's socket, -1 between attempts (tests read its `TCP_INFO`).
    var socketDescriptor: Int32 { mosquitto_socket(handle.pointer) }

    /// Why the connection ended, from a failed libmosquitto call; nil for a requested disconnect.
    private func failure(_ rc: Int32, errnoValue: Int32, _ attempt: MosquittoCallbackContext.Attempt) -> MQTTError? {
        if let refusal = attempt.refusal { return refusal }
        if rc == MOSQ_ERR_NO_CONN.rawValue && isStopping { return nil }
        if !attempt.connected, let refusal = attempt.certificateRefusal {
            return MosquittoResult.certificateError(
                refusal.check, reason: refusal.reason, "connecting to \(configuration.broker)")
        }
        if !attempt.connected, let problem = attempt.lastProblem, problem.hasPrefix("OpenSSL") {
            // A TLS alert from the broker (e.g. certificate required) ends the socket; say it is TLS.
            return MQTTError(
                .tlsFailure, "connecting to \(configuration.broker): TLS failure: \(problem)", underlyingCode: rc)
        }
        return MosquittoResult.error(
            rc, attempt.connected ? "connection to \(configuration.broker)" : "connecting to \(configuration.broker)",
            errnoValue: errnoValue, detail: attempt.connected ? nil : attempt.lastProblem)
    }

    /// The attempt is over (`failure` nil: as requested): report it, then retry after the
    /// backoff's delay or finish.
    private func endAttempt(_ failure: MQTTError?) {
        let ending = state.withLock { state -> Attempt? in
            let attempt = state.attempt
            state.attempt = nil
            return attempt
        }
        if let attempt = ending {
            // On the loop's thread: the handler is never called again, so a later socket may
            // reuse the descriptor's number.
            attempt.watch.cancel()
            attempt.tick?.cancel()
        }
        var reason = failure
        let wasConnected = context.attempt.withLock { $0.connected }
        if isStopping && (wasConnected || reason?.code == .noConnection) { reason = nil }
        let stopsHere = isStopping || (stopAfterFirstFailure && !state.withLock { $0.everConnected } && !wasConnected)
        let (delay, failures, everConnected) = state.withLock { state in
            if wasConnected { state.backoff.reset() }
            state.failuresInRow = wasConnected ? 0 : state.failuresInRow + 1
            let delay = stopsHere ? nil : state.backoff.nextDelay(jitter: Double.random(in: 0...1))
            let everConnected = state.everConnected || wasConnected
            state.everConnected = everConnected
            return (delay, state.failuresInRow, everConnected)
        }
        if let reason {
            // One line per attempt (docs/deploy.md, "Logs"): what failed and when the next try comes.
            let report = MQTTRetryReport(
                reason: reason.message, broker: "\(configuration.broker)", wasConnected: wasConnected,
                everConnected: everConnected, failures: failures, retryIn: delay)
            logger.log(report.level, report.message, metadata: report.metadata.map { ($0.key, $0.value) })
        }
        context.events.yield(.disconnected(reason: reason, wasConnected: wasConnected))
        guard let delay else { return finish() }
        let retry = loop.schedule(after: delay) { [self] in beginAttempt() }
        state.withLock { $0.retry = retry }
    }

    /// A stop was requested: serve the connection (the DISCONNECT goes out, the stop's bound
    /// starts), or end the wait between attempts.
    private func stopRequested() {
        let (connected, retry) = state.withLock { ($0.attempt != nil, $0.retry) }
        if connected {
            turn([])
        } else if let retry {
            retry.cancel()
            finish()
        }
    }

    private func finish() {
        let first = state.withLock { state -> Bool in
            let first = !state.finished
            state.finished = true
            return first
        }
        guard first else { return }
        state.withLock { $0.retry = nil }
        context.events.yield(.loopStopped)
        context.events.finish()
        loop.shutdown()
    }
}
