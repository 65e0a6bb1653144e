import Bluetooth
import DBus
import Foundation
import Logging
import TaskScope
import Timekeeping

/// The connection, driven by ``CentralManager`` through the ``ConnectionLifecycle`` state machine.
extension Peripheral {
    // MARK: Connection (driven by CentralManager)

    func connect(timeout: Duration) async throws {
        guard scope.isOpen else { throw BluetoothError(.operationCancelled, "the central manager is closed") }
        nextID += 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                connectWaiters[id] = continuation
                handle(.connectRequested(timeout: timeout))
            }
        } onCancel: {
            Task { await self.cancelConnectWaiter(id) }  // a hop from the cancelling thread: resumes the waiter
        }
    }

    private func cancelConnectWaiter(_ id: Int) {
        connectWaiters.removeValue(forKey: id)?.resume(throwing: BluetoothError(.operationCancelled))
    }

    func cancelConnection() {
        handle(.cancelRequested)
    }

    /// Disconnects, or abandons a pending connect, and returns once BlueZ has reported the link down
    /// and nothing is pending (or when the calling task is cancelled). A process that exits right
    /// after `cancelConnection()` can leave its `Disconnect` unsent, or the device connected by a
    /// `Connect` BlueZ completes later, to nobody: a connected device stops advertising and the
    /// next start never sees it.
    func disconnect() async {
        handle(.cancelRequested)
        guard !isSettled else { return }
        nextID += 1
        let id = nextID
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if isSettled || Task.isCancelled {
                    continuation.resume()
                } else {
                    settledWaiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.resumeSettledWaiter(id) }  // a hop from the cancelling thread: resumes the waiter
        }
    }

    private func resumeSettledWaiter(_ id: Int) {
        settledWaiters.removeValue(forKey: id)?.resume()
    }

    /// No link and no attempt: what `disconnect()` waits for.
    private var isSettled: Bool { lifecycle.state == .disconnected && !lifecycle.isLinkUp }

    /// Feeds one event to the lifecycle and performs its actions. With `BLEBRIDGE_LOG=debug` every
    /// step is logged (event, new state, actions): the trail to read when a connect times out.
    func handle(_ event: ConnectionLifecycle.Event) {
        let actions = lifecycle.handle(event)
        Self.logger.debug(
            "lifecycle",
            [
                ("device", identifier.description), ("event", "\(event)"), ("state", "\(lifecycle.state)"),
                ("actions", actions.map { "\($0)" }.joined(separator: ", ")),
            ])
        for action in actions { perform(action) }
        if isSettled, !settledWaiters.isEmpty {
            let waiters = settledWaiters
            settledWaiters.removeAll()
            for waiter in waiters.values { waiter.resume() }
        }
    }

    static let logger = Logger(label: "connection")

    func perform(_ action: ConnectionLifecycle.Action) {
        switch action {
        case .callConnect(let attempt):
            let connection = self.connection
            let path = self.path
            // Our own deadline governs; the D-Bus timeout is only a backstop.
            let timeout = max(callTimeout, .seconds(60))
            let call = Result {
                try connection.startCall(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.device, method: "Connect",
                    timeout: timeout)
            }
            awaitReply(call) { peripheral, error in
                if let error {
                    peripheral.handle(.connectFailed(attempt: attempt, BluetoothError.from(error, during: .connect)))
                } else {
                    peripheral.handle(.connectSucceeded(attempt: attempt, servicesCached: peripheral.hasCachedServices))
                }
            }
        case .callDisconnect:
            let curing = lifecycle.state == .curingStaleInProgress || lifecycle.state == .recoveringStalledResolve
            let attempt = lifecycle.attempt
            let connection = self.connection
            let path = self.path
            let timeout = callTimeout
            let call = Result {
                try connection.startCall(
                    destination: BlueZNames.service, path: path, interface: BlueZNames.device, method: "Disconnect",
                    timeout: timeout)
            }
            awaitReply(call) { peripheral, _ in
                peripheral.handle(curing ? .cureFinished(attempt: attempt) : .disconnectFinished)
            }
        case .startTimeout(let attempt, let duration):
            timeoutTask?.cancel()
            // The connect attempt's timeout (a stale one is ignored by the lifecycle: `attempt`).
            timeoutTask = scope.spawnTimer(at: clock.now + duration, clock: clock) {
                await self.handle(.timeoutFired(attempt: attempt))
            }
        case .cancelTimeout:
            timeoutTask?.cancel()
            timeoutTask = nil
            resolveTimerTask?.cancel()
            resolveTimerTask = nil
        case .startResolveTimer(let attempt, let round, let duration):
            resolveTimerTask?.cancel()
            Self.logger.debug(
                "waiting for ServicesResolved of a cached device",
                [("device", identifier.description), ("limit", "\(duration)")])
            resolveTimerTask = scope.spawnTimer(at: clock.now + duration, clock: clock) {
                await self.resolveTimerFired(attempt: attempt, round: round, after: duration)
            }
        case .scheduleRetry(let attempt, let delay):
            // The lifecycle's retry delay (after InProgress or an aborted link). Once the manager is
            // closed the retry is due at once, and its connect fails `operationCancelled`.
            let timer = scope.spawnTimer(at: clock.now + delay, clock: clock) {
                await self.handle(.retryDue(attempt: attempt))
            }
            if timer == nil { Task { self.handle(.retryDue(attempt: attempt)) } }
        case .completeConnect(let error):
            let waiters = connectWaiters
            connectWaiters.removeAll()
            for waiter in waiters.values {
                if let error { waiter.resume(throwing: error) } else { waiter.resume() }
            }
        case .failPendingOperations(let error):
            let failing = operations
            operations.removeAll()
            gattWaiters.removeAll()
            for fail in failing.values { fail(error) }
            let ending = subscriptions
            subscriptions.removeAll()
            for subscription in ending.values {
                if subscription.awaitingAnswer { for fail in subscription.waiters.values { fail(error) } }
                let channel = subscription.channel
                if let reader = subscription.reader {
                    // The channel ends once the reader delivered what its socket still held: the
                    // last notifications before a link drop are not lost.
                    reader.stop { channel.finish(throwing: error) }
                } else {
                    channel.finish(throwing: error)
                }
            }
            acquiredMTU = nil
        case .emitDisconnected(let reason):
            onDisconnect(DisconnectEvent(peripheral: self, reason: reason))
        }
    }

    /// Awaits `call`'s reply in the manager's scope and hands the outcome (nil for a reply, else the
    /// error) to `answered` on this actor. Once the manager is closed the call is abandoned and
    /// `answered` gets `operationCancelled` through a short hop: something waits for it (a connect, a
    /// disconnect), and no scope is left to run it in.
    private func awaitReply(
        _ call: Result<DBusSentCall, any Error>,
        _ answered: @escaping @Sendable (isolated Peripheral, (any Error)?) -> Void
    ) {
        let awaiting = scope.spawn {
            var failure: (any Error)?
            do { _ = try await call.get().reply() } catch { failure = error }
            await self.deliver(failure, to: answered)
        }
        if !awaiting {
            (try? call.get())?.cancel()
            let closed = BluetoothError(.operationCancelled, "the central manager is closed")
            Task { self.deliver(closed, to: answered) }
        }
    }

    private func deliver(
        _ failure: (any Error)?, to answered: @Sendable (isolated Peripheral, (any Error)?) -> Void
    ) {
        answered(self, failure)
    }

    /// ``CentralManager/close()``: the manager's signals stop, so nothing would end an attempt or a
    /// link: both end here, as if the adapter went away (`operationCancelled` for what waits).
    func managerClosed() {
        handle(.adapterLost(.local))
    }

    private func resolveTimerFired(attempt: UInt64, round: Int, after duration: Duration) {
        handle(.resolveTimerFired(attempt: attempt, round: round))
        guard lifecycle.state == .recoveringStalledResolve else { return }
        Self.logger.notice(
            "the link is up but bluetoothd did not resolve the cached services; reconnecting",
            [("device", identifier.description), ("after", "\(duration)")])
    }

    /// Whether bluetoothd exports GATT services for the device before it resolved them: its cached database.
    private var hasCachedServices: Bool {
        gatt.values.contains { $0[BlueZNames.gattService] != nil }
    }
}
