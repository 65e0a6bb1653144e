internal import CMosquitto
import Dispatch
import Foundation
import Logging
import Synchronization
import Timekeeping

/// The dedicated thread that owns one libmosquitto connection: it connects, runs the socket loop,
/// reconnects with backoff, and reports everything as ``MQTTEvent``s.
///
/// Nothing here runs on Swift's cooperative pool: DNS, TCP connect, TLS handshakes and the
/// socket loop all happen on this thread. The client actor only calls libmosquitto's
/// thread-safe operations (publish, subscribe, unsubscribe, disconnect) on the handle; those queue
/// their packet (threaded mode) and ``nudge()`` wakes this thread to write it.
///
/// The loop is libmosquitto's external-loop API (`mosquitto_loop_read`/`_write`/`_misc` around our
/// own `poll` on the socket and a wake-up pipe), not `mosquitto_loop` (which waits on a socket pair
/// that every queued packet writes to): in A/B runs at 1,000 readings/s this thread switched 1.12
/// times per reading instead of 1.53.
final class MQTTNetworkLoop: Sendable {
    let handle: MosquittoHandle
    let events: AsyncStream<MQTTEvent>
    private let configuration: MQTTConfiguration
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    /// Wakes the socket loop's `poll` (stop requested, a packet left waiting for the socket): a
    /// non-blocking pipe, [read end, write end].
    private let loopWake: (read: Int32, write: Int32)
    private let logger = Logger(label: "mqtt")

    /// Stop by itself after a failed attempt as long as no connection was ever accepted
    /// (``MQTTClient/connect()``), instead of retrying.
    private let stopAfterFirstFailure: Bool

    init(configuration: MQTTConfiguration, stopAfterFirstFailure: Bool) throws(MQTTError) {
        self.stopAfterFirstFailure = stopAfterFirstFailure
        let (events, continuation) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
        let context = MosquittoCallbackContext(
            events: continuation, protocolVersion: configuration.protocolVersion, clock: configuration.clock)
        self.handle = try MosquittoHandle(
            clientID: configuration.clientID, cleanSession: configuration.cleanSession, context: context)
        self.events = events
        self.configuration = configuration
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw MQTTError(.outOfMemory, "cannot create the MQTT loop's wake-up pipe: errno \(errno)")
        }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        loopWake = (ends[0], ends[1])
    }

    deinit {
        close(loopWake.read)
        close(loopWake.write)
    }

    func start() {
        let thread = Thread { [self] in
            ThreadName.setCurrent("blebridge.mqtt")
            run()
        }
        thread.start()
    }

    /// Asks the thread to send DISCONNECT (no will) and finish; returns at once.
    func requestStop() {
        stopping.store(true, ordering: .releasing)
        _ = mosquitto_disconnect(handle.pointer)
        wake.signal()
        poke()
    }

    /// After a publish, subscribe or unsubscribe from another thread: wakes the loop to write the
    /// packet (in threaded mode libmosquitto only queues it). Only the loop thread itself asks
    /// `mosquitto_want_write`, which reads libmosquitto's queue without its lock.
    func nudge() {
        poke()
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(loopWake.write, &byte, 1)  // EAGAIN: the pipe is full, the loop wakes anyway
    }

    /// Test hook: shuts the socket down without DISCONNECT, as a crash or network loss would.
    func dropConnection() {
        let fd = mosquitto_socket(handle.pointer)
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private var isStopping: Bool { stopping.load(ordering: .acquiring) }
    private var context: MosquittoCallbackContext { handle.context }

    private func run() {
        var backoff = MQTTReconnectBackoff(
            minimum: configuration.minimumReconnectDelay, maximum: configuration.maximumReconnectDelay)
        var hostIsSet = false  // mosquitto_connect_bind_v5 ran once; later attempts use mosquitto_reconnect
        var everConnected = false
        var failuresInRow = 0
        var configured = false
        while !isStopping {
            context.attempt.withLock { $0 = .init() }
            context.inFlight.withLock { $0.connectionReset() }
            MosquittoCallbackContext.setLogging(on: handle.pointer, true)
            context.events.yield(.attemptStarted)
            var reason: MQTTError?
            do throws(MQTTError) {
                if !configured {
                    try configureOnce()
                    configured = true
                }
                try applyCredentials()
                try connectSocket(first: !hostIsSet)
                hostIsSet = true
                reason = runUntilDisconnected()
            } catch {
                reason = error
                if error.code != .invalidConfiguration { hostIsSet = hostIsSet || configured }
            }
            let wasConnected = context.attempt.withLock { $0.connected }
            if wasConnected { backoff.reset() }
            failuresInRow = wasConnected ? 0 : failuresInRow + 1
            if isStopping && (wasConnected || reason?.code == .noConnection) { reason = nil }
            let stopsHere = isStopping || (stopAfterFirstFailure && !everConnected && !wasConnected)
            let delay = stopsHere ? nil : backoff.nextDelay(jitter: Double.random(in: 0...1))
            if let reason {
                // One line per attempt (docs/deploy.md, "Logs"): what failed and when the next try comes.
                let report = MQTTRetryReport(
                    reason: reason.message, broker: "\(configuration.broker)", wasConnected: wasConnected,
                    everConnected: everConnected || wasConnected, failures: failuresInRow, retryIn: delay)
                logger.log(report.level, report.message, metadata: report.metadata.map { ($0.key, $0.value) })
            }
            context.events.yield(.disconnected(reason: reason, wasConnected: wasConnected))
            everConnected = everConnected || wasConnected
            guard let delay else { break }
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(delay.inNanoseconds)))
        }
        context.events.yield(.loopStopped)
        context.events.finish()
    }

    /// Options set once per handle: protocol, TCP_NODELAY, TLS, will.
    private func configureOnce() throws(MQTTError) {
        let mosq = handle.pointer
        let version = configuration.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try MosquittoResult.check(
            mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, version), "setting the protocol version")
        try MosquittoResult.check(mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1), "setting TCP_NODELAY")
        if configuration.broker.usesTLS { try configureTLS(configuration.tls ?? MQTTTLSConfiguration()) }
        if let will = configuration.will {
            let properties = try MosquittoPropertyList(will.properties)
            let rc = will.payload.withUnsafeBytes {
                mosquitto_will_set_v5(
                    mosq, will.topic, Int32($0.count), $0.baseAddress, will.qos.rawValue, will.retain, properties.head)
            }
            try MosquittoResult.check(rc, "setting the last will on \(will.topic)")
            _ = properties.transferOwnership()  // libmosquitto owns the list after success
        }
    }

    private func configureTLS(_ tls: MQTTTLSConfiguration) throws(MQTTError) {
        let mosq = handle.pointer
        for file in [tls.caFile, tls.certificateFile, tls.keyFile].compactMap({ $0 })
        where access(file, R_OK) != 0 {
            throw MQTTError(.tlsFailure, "TLS file \(file) is not readable: \(String(cString: strerror(errno)))")
        }
        if tls.caFile == nil {
            try MosquittoResult.check(
                mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "using the system CA certificates")
        }
        try MosquittoTLSVerifier.install(
            on: mosq, context: context, host: tls.insecure ? nil : configuration.broker.host)
        let rc = mosquitto_tls_set(
            mosq, tls.caFile, tls.caFile == nil ? "/etc/ssl/certs" : nil, tls.certificateFile, tls.keyFile, nil)
        try MosquittoResult.check(rc, "setting up TLS", detail: context.attempt.withLock { $0.lastProblem })
        if tls.insecure {
            logger.warning("MQTT TLS host-name verification is OFF (tls.insecure); use only for tests")
            try MosquittoResult.check(mosquitto_tls_insecure_set(mosq, true), "disabling host-name verification")
        }
    }

    /// Reads the password (file or environment) afresh before every attempt; never logs it.
    private func applyCredentials() throws(MQTTError) {
        guard let username = configuration.username else { return }
        let password = try configuration.password?.resolve()
        try MosquittoResult.check(
            mosquitto_username_pw_set(handle.pointer, username, password), "setting the user name and password")
    }

    private func connectSocket(first: Bool) throws(MQTTError) {
        let mosq = handle.pointer
        let broker = configuration.broker
        let keepAlive = Int32(configuration.keepAlive.components.seconds)
        let rc: Int32
        var savedErrno: Int32 = 0
        if first {
            let properties = MosquittoPropertyList()
            if configuration.protocolVersion == .v5 && !configuration.cleanSession {
                try properties.addSessionExpiry(configuration.sessionExpiry)
            }
            if configuration.protocolVersion == .v5, let maximum = configuration.maximumPacketSize {
                try properties.addMaximumPacketSize(maximum)
            }
            rc = mosquitto_connect_bind_v5(mosq, broker.host, Int32(broker.port), keepAlive, nil, properties.head)
            savedErrno = errno
        } else {
            rc = mosquitto_reconnect(mosq)
            savedErrno = errno
        }
        if rc != MosquittoResult.success {
            if let refusal = context.attempt.withLock({ $0.certificateRefusal }) {
                throw MosquittoResult.certificateError(refusal.check, reason: refusal.reason, "connecting to \(broker)")
            }
            throw MosquittoResult.error(
                rc, "connecting to \(broker)", errnoValue: savedErrno,
                detail: context.attempt.withLock { $0.lastProblem })
        }
    }

    /// Runs the socket loop until the connection ends; returns why (nil: requested disconnect).
    private func runUntilDisconnected() -> MQTTError? {
        let mosq = handle.pointer
        let clock = ContinuousClock()
        let connectDeadline = clock.now + configuration.connectTimeout
        var stopDeadline: ContinuousClock.Instant?
        var logging = true
        while true {
            let rc = step(timeoutMilliseconds: 500)
            let savedErrno = errno
            context.reportConnect()
            let attempt = context.attempt.withLock { $0 }
            if logging && attempt.connected {
                MosquittoCallbackContext.setLogging(on: mosq, false)
                logging = false
            }
            if rc != MosquittoResult.success {
                if let refusal = attempt.refusal { return refusal }
                if rc == MOSQ_ERR_NO_CONN.rawValue && isStopping { return nil }
                if !attempt.connected, let refusal = attempt.certificateRefusal {
                    return MosquittoResult.certificateError(
                        refusal.check, reason: refusal.reason, "connecting to \(configuration.broker)")
                }
                if !attempt.connected, let problem = attempt.lastProblem, problem.hasPrefix("OpenSSL") {
                    // A TLS alert from the broker (e.g. certificate required) ends the socket; say it is TLS.
                    return MQTTError(
                        .tlsFailure, "connecting to \(configuration.broker): TLS failure: \(problem)",
                        underlyingCode: rc)
                }
                return MosquittoResult.error(
                    rc,
                    attempt.connected
                        ? "connection to \(configuration.broker)" : "connecting to \(configuration.broker)",
                    errnoValue: savedErrno, detail: attempt.connected ? nil : attempt.lastProblem)
            }
            if isStopping {
                if let deadline = stopDeadline {
                    if clock.now > deadline { return nil }
                } else {
                    stopDeadline = clock.now + .seconds(2)
                    _ = mosquitto_disconnect(mosq)
                }
            } else if !attempt.connected && clock.now > connectDeadline {
                _ = mosquitto_disconnect(mosq)
                return MQTTError(
                    .timeout, "connecting to \(configuration.broker): no CONNACK within \(configuration.connectTimeout)"
                )
            }
        }
    }
}

extension MQTTNetworkLoop {
    /// One turn of the socket loop (what `mosquitto_loop` does, without its socket pair): waits for
    /// the socket (readable, or writable when a packet waits) or ``nudge()``, reads and writes what is
    /// ready, then lets libmosquitto send pings and retries (`mosquitto_loop_misc`).
    fileprivate func step(timeoutMilliseconds: Int32) -> Int32 {
        let mosq = handle.pointer
        let socket = mosquitto_socket(mosq)
        guard socket >= 0 else { return MOSQ_ERR_NO_CONN.rawValue }
        let writing = mosquitto_want_write(mosq)
        var fds = [
            pollfd(fd: socket, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: loopWake.read, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&fds, 2, timeoutMilliseconds)
        if ready < 0 {
            return errno == EINTR ? MosquittoResult.success : MOSQ_ERR_ERRNO.rawValue
        }
        if fds[1].revents != 0 {
            var scratch = [UInt8](repeating: 0, count: 64)
            while scratch.withUnsafeMutableBytes({ read(loopWake.read, $0.baseAddress, 64) }) > 0 {}
        }
        if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
            let rc = mosquitto_loop_read(mosq, 1)
            if rc != MosquittoResult.success || mosquitto_socket(mosq) < 0 { return rc }
        }
        // Write when the socket said so, or when a packet was queued while we waited without asking.
        if fds[0].revents & Int16(POLLOUT) != 0 || (!writing && mosquitto_want_write(mosq)) {
            let rc = mosquitto_loop_write(mosq, 1)
            if rc != MosquittoResult.success || mosquitto_socket(mosq) < 0 { return rc }
        }
        return mosquitto_loop_misc(mosq)
    }
}
