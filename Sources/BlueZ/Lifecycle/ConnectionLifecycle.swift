import Bluetooth

/// The connection lifecycle of one peripheral as a plain state machine: events in, actions out, no I/O.
///
/// `disconnected → connecting → resolvingServices → ready`, with `disconnecting` for local disconnects. It
/// encodes the BlueZ rules that matter:
/// - one `Device1.Connect` at a time per device: a second `connect` joins the pending attempt;
/// - `connect` completes only when the link is up *and* `ServicesResolved` is true (in either order);
/// - `org.bluez.Error.InProgress` on `Connect` is retried after a short delay; if it persists, the stale state is
///   cured by calling `Disconnect` and then `Connect` again (bleak-retry-connector#226);
/// - `le-connection-abort-by-local` and similar aborts get an immediate retry within the deadline (bleak#1255);
/// - a deadline (default 30 s) for the whole attempt; on timeout or cancel, `Disconnect` cancels BlueZ's pending
///   connection so no half-open attempt is left behind;
/// - a device whose GATT database bluetoothd has cached needs only an MTU exchange and a DB Hash read once the
///   link is up; when `ServicesResolved` has not come within `cachedResolveTimeout`, that exchange stalled (the VM
///   tier saw bluetoothd's MTU request go unanswered for ATT's whole 30 s) and the link is useless, so the
///   attempt disconnects and connects once more within its deadline instead of waiting the deadline out;
/// - a link that drops fails every pending GATT operation and reports a disconnect with its reason.
///
/// The owner (the `Peripheral` actor) performs the actions and feeds the results back, tagged with the attempt
/// number so that late replies of an abandoned attempt are ignored.
public struct ConnectionLifecycle: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Delay before re-issuing `Connect` after `InProgress`.
        public var inProgressRetryDelay: Duration = .milliseconds(500)
        /// `InProgress` retries before the stale-state cure (Disconnect, then Connect).
        public var inProgressRetries: Int = 2
        /// Immediate retries after an aborted connection (`le-connection-abort-by-local`, …).
        public var abortRetries: Int = 1
        /// Delay before such a retry.
        public var abortRetryDelay: Duration = .milliseconds(250)
        /// How long a device with cached GATT objects may take from link-up to `ServicesResolved` before the
        /// attempt disconnects and connects again (nil: only the attempt's deadline applies).
        public var cachedResolveTimeout: Duration? = .seconds(5)
        /// Reconnects within one attempt after such a stall.
        public var resolveStallRetries: Int = 1

        public init() {}
    }

    public enum State: Sendable, Hashable {
        case disconnected
        /// `Connect` is outstanding.
        case connecting
        /// Waiting to re-issue `Connect` after `InProgress` or an abort.
        case waitingToRetry
        /// `Disconnect` is outstanding to clear a stale `InProgress`; `Connect` follows.
        case curingStaleInProgress
        /// `Connect` succeeded; waiting for `ServicesResolved`.
        case resolvingServices
        /// `ServicesResolved` stalled on a cached device: `Disconnect` is outstanding (or the link is still going
        /// down); `Connect` follows within the same attempt and deadline.
        case recoveringStalledResolve
        /// Connected and services resolved: usable.
        case ready
        /// A local `Disconnect` is outstanding.
        case disconnecting
    }

    public enum Event: Sendable, Hashable {
        /// A caller wants the peripheral connected within `timeout`.
        case connectRequested(timeout: Duration)
        /// The `Connect` call of `attempt` returned successfully; `servicesCached` when bluetoothd already
        /// exported the device's GATT objects (its cache), so resolving should take an MTU exchange and a hash read.
        case connectSucceeded(attempt: UInt64, servicesCached: Bool = false)
        /// The `Connect` call of `attempt` failed.
        case connectFailed(attempt: UInt64, BluetoothError)
        /// The delay scheduled by `scheduleRetry` elapsed.
        case retryDue(attempt: UInt64)
        /// The `Disconnect` issued to cure a stale `InProgress` returned (successfully or not).
        case cureFinished(attempt: UInt64)
        /// The deadline of `attempt` passed.
        case timeoutFired(attempt: UInt64)
        /// The timer of `startResolveTimer(attempt, round)` fired.
        case resolveTimerFired(attempt: UInt64, round: Int)
        /// The caller cancels the connection (`cancelConnection`).
        case cancelRequested
        /// A local `Disconnect` call returned (successfully or not).
        case disconnectFinished
        /// `Device1.Connected` changed.
        case connectedChanged(Bool)
        /// `Device1.ServicesResolved` changed.
        case servicesResolvedChanged(Bool)
        /// BlueZ told why the link went down (`Device1.Disconnected`); used for the next disconnect event.
        case disconnectReasonReported(DisconnectReason)
        /// The adapter was powered off, removed, or BlueZ went away: the link is gone without further signals.
        case adapterLost(DisconnectReason)
    }

    public enum Action: Sendable, Hashable {
        /// Call `Device1.Connect`; report `connectSucceeded`/`connectFailed` with this attempt.
        case callConnect(attempt: UInt64)
        /// Call `Device1.Disconnect`; report `disconnectFinished` (or `cureFinished` while curing).
        case callDisconnect
        /// Report `timeoutFired(attempt)` after `duration`.
        case startTimeout(attempt: UInt64, Duration)
        /// The deadline is no longer needed.
        case cancelTimeout
        /// Report `resolveTimerFired(attempt, round)` after `duration` (a stale one is ignored).
        case startResolveTimer(attempt: UInt64, round: Int, Duration)
        /// Report `retryDue(attempt)` after `delay`.
        case scheduleRetry(attempt: UInt64, after: Duration)
        /// Resume every caller waiting in `connect`: nil for success, or the error.
        case completeConnect(BluetoothError?)
        /// Fail every pending GATT operation and end notification streams with this error.
        case failPendingOperations(BluetoothError)
        /// Tell listeners the peripheral disconnected.
        case emitDisconnected(DisconnectReason)
    }

    public private(set) var state: State = .disconnected
    /// `Device1.Connected` as last reported.
    public private(set) var isLinkUp = false
    /// `Device1.ServicesResolved` as last reported.
    public private(set) var servicesResolved = false
    /// The current attempt number (increases with each `connect` that starts a new attempt).
    public private(set) var attempt: UInt64 = 0
    public let configuration: Configuration

    private var inProgressRetriesLeft = 0
    private var abortRetriesLeft = 0
    private var cureUsed = false
    private var reportedReason: DisconnectReason?
    private var resolveStallRetriesLeft = 0
    /// Counts link-ups within an attempt, so a resolve timer of an earlier link-up is ignored.
    private var resolveRound = 0
    /// While recovering a stalled resolve: the `Disconnect` call has returned (`Connect` waits for the link too).
    private var stallDisconnectReturned = false
    /// A connect requested while a local disconnect was outstanding, with its timeout.
    private var connectAfterDisconnect: Duration?
    /// The link came up and dropped while `Connect` was outstanding: a successful reply that
    /// follows (sent before the drop) does not make the attempt good.
    private var linkDroppedWhileConnecting = false

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The public state of the peripheral.
    public var peripheralState: PeripheralState {
        switch state {
        case .disconnected: .disconnected
        case .connecting, .waitingToRetry, .curingStaleInProgress, .resolvingServices, .recoveringStalledResolve:
            .connecting
        case .ready: .connected
        case .disconnecting: .disconnecting
        }
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .connectRequested(let timeout): return connectRequested(timeout: timeout)
        case .connectSucceeded(let number, let servicesCached):
            guard number == attempt, state == .connecting else { return [] }
            if linkDroppedWhileConnecting {
                linkDroppedWhileConnecting = false
                return fail(BluetoothError(.connectionFailed, "the link dropped before services were resolved"))
            }
            if servicesResolved && isLinkUp { return becomeReady() }
            isLinkUp = true
            state = .resolvingServices
            guard servicesCached, resolveStallRetriesLeft > 0, let limit = configuration.cachedResolveTimeout else {
                return []
            }
            resolveRound += 1
            return [.startResolveTimer(attempt: attempt, round: resolveRound, limit)]
        case .resolveTimerFired(let number, let round):
            guard number == attempt, round == resolveRound, state == .resolvingServices, !servicesResolved else {
                return []
            }
            resolveStallRetriesLeft -= 1
            state = .recoveringStalledResolve
            stallDisconnectReturned = false
            return [.callDisconnect]
        case .connectFailed(let number, let error):
            guard number == attempt, state == .connecting else { return [] }
            return connectFailed(error)
        case .retryDue(let number):
            guard number == attempt, state == .waitingToRetry else { return [] }
            state = .connecting
            linkDroppedWhileConnecting = false
            return [.callConnect(attempt: attempt)]
        case .cureFinished(let number):
            guard number == attempt else { return [] }
            if state == .recoveringStalledResolve {
                // `Connect` only once the link is down too: the old link's `Connected` false must not
                // reach the new attempt (bluetoothd replies to `Disconnect` before it emits that).
                stallDisconnectReturned = true
                return isLinkUp ? [] : reconnectAfterStall()
            }
            guard state == .curingStaleInProgress else { return [] }
            state = .connecting
            linkDroppedWhileConnecting = false
            return [.callConnect(attempt: attempt)]
        case .timeoutFired(let number):
            guard number == attempt, isAttempting else { return [] }
            return abandonAttempt(
                BluetoothError(.connectionTimeout, "no connection with resolved services within the timeout"))
        case .cancelRequested: return cancelRequested()
        case .disconnectFinished:
            guard state == .disconnecting else { return [] }
            return disconnectFinished()
        case .connectedChanged(let up): return connectedChanged(up)
        case .servicesResolvedChanged(let resolved):
            servicesResolved = resolved
            if resolved, state == .resolvingServices || (state == .connecting && isLinkUp) {
                return becomeReady()
            }
            return []
        case .disconnectReasonReported(let reason):
            reportedReason = reason
            return []
        case .adapterLost(let reason): return adapterLost(reason)
        }
    }

    private var isAttempting: Bool {
        switch state {
        case .connecting, .waitingToRetry, .curingStaleInProgress, .resolvingServices, .recoveringStalledResolve: true
        case .disconnected, .ready, .disconnecting: false
        }
    }

    private mutating func connectRequested(timeout: Duration) -> [Action] {
        switch state {
        case .ready:
            return [.completeConnect(nil)]
        case .connecting, .waitingToRetry, .curingStaleInProgress, .resolvingServices, .recoveringStalledResolve:
            return []  // joins the pending attempt
        case .disconnecting:
            connectAfterDisconnect = timeout
            return []
        case .disconnected:
            return startAttempt(timeout: timeout)
        }
    }

    private mutating func startAttempt(timeout: Duration) -> [Action] {
        attempt &+= 1
        inProgressRetriesLeft = configuration.inProgressRetries
        abortRetriesLeft = configuration.abortRetries
        resolveStallRetriesLeft = configuration.resolveStallRetries
        cureUsed = false
        reportedReason = nil
        if isLinkUp && servicesResolved {
            // Already connected (by BlueZ auto-connect or another client): nothing to call.
            state = .ready
            return [.completeConnect(nil)]
        }
        state = .connecting
        linkDroppedWhileConnecting = false
        return [.startTimeout(attempt: attempt, timeout), .callConnect(attempt: attempt)]
    }

    private mutating func connectFailed(_ error: BluetoothError) -> [Action] {
        switch error.code {
        case .inProgress:
            if inProgressRetriesLeft > 0 {
                inProgressRetriesLeft -= 1
                state = .waitingToRetry
                return [.scheduleRetry(attempt: attempt, after: configuration.inProgressRetryDelay)]
            }
            if !cureUsed {
                cureUsed = true
                state = .curingStaleInProgress
                return [.callDisconnect]
            }
            return fail(error)
        case .alreadyExists:
            // AlreadyConnected: the link is up; wait for ServicesResolved.
            isLinkUp = true
            if servicesResolved { return becomeReady() }
            state = .resolvingServices
            return []
        case .connectionFailed where abortRetriesLeft > 0:
            abortRetriesLeft -= 1
            state = .waitingToRetry
            return [.scheduleRetry(attempt: attempt, after: configuration.abortRetryDelay)]
        default:
            return fail(error)
        }
    }

    /// The attempt failed on its own: BlueZ has nothing pending, so nothing to disconnect.
    private mutating func fail(_ error: BluetoothError) -> [Action] {
        state = .disconnected
        return [.cancelTimeout, .completeConnect(error)]
    }

    /// Timeout or cancel: tell BlueZ to drop the pending connection, fail the callers.
    private mutating func abandonAttempt(_ error: BluetoothError) -> [Action] {
        state = .disconnecting
        connectAfterDisconnect = nil
        var actions: [Action] = [.cancelTimeout, .completeConnect(error), .callDisconnect]
        if isLinkUp { actions.insert(.failPendingOperations(error), at: 2) }
        return actions
    }

    private mutating func cancelRequested() -> [Action] {
        switch state {
        case .connecting, .waitingToRetry, .curingStaleInProgress, .resolvingServices, .recoveringStalledResolve:
            return abandonAttempt(BluetoothError(.operationCancelled, "the connection was cancelled"))
        case .ready:
            state = .disconnecting
            return [.callDisconnect]
        case .disconnecting:
            connectAfterDisconnect = nil
            return []
        case .disconnected:
            guard isLinkUp else { return [] }
            state = .disconnecting
            return [.callDisconnect]
        }
    }

    private mutating func disconnectFinished() -> [Action] {
        if isLinkUp {
            // Wait for Connected=false; BlueZ reports it right after the reply.
            return []
        }
        return settleDisconnected()
    }

    private mutating func settleDisconnected() -> [Action] {
        state = .disconnected
        if let timeout = connectAfterDisconnect {
            connectAfterDisconnect = nil
            return startAttempt(timeout: timeout)
        }
        return []
    }

    private mutating func connectedChanged(_ up: Bool) -> [Action] {
        let wasUp = isLinkUp
        isLinkUp = up
        if up {
            linkDroppedWhileConnecting = false
            if state == .connecting && servicesResolved { return becomeReady() }
            return []
        }
        servicesResolved = false
        guard wasUp else { return [] }
        let reason = state == .disconnecting ? DisconnectReason.local : (reportedReason ?? .remote)
        reportedReason = nil
        switch state {
        case .ready:
            state = .disconnected
            return [.failPendingOperations(reason.pendingOperationError), .emitDisconnected(reason)]
        case .connecting:
            // `Connect` is still outstanding and its reply decides the attempt (an aborted link,
            // `le-connection-abort-by-local`, is retried). bluetoothd sends the reply before this
            // signal, but the reply and the signal reach the lifecycle by separate tasks, so under
            // load the signal can come first; failing here skipped the retry.
            linkDroppedWhileConnecting = true
            return [.emitDisconnected(reason)]
        case .resolvingServices:
            // The link dropped before services resolved: the attempt failed.
            state = .disconnected
            let error = BluetoothError(.connectionFailed, "the link dropped before services were resolved")
            return [
                .cancelTimeout, .completeConnect(error), .failPendingOperations(error),
                .emitDisconnected(reason),
            ]
        case .disconnecting:
            let actions: [Action] = [
                .failPendingOperations(reason.pendingOperationError), .emitDisconnected(.local),
            ]
            return actions + settleDisconnected()
        case .recoveringStalledResolve:
            // Our own `Disconnect` of a link nobody used: not a disconnect anyone was told of a connect for.
            return stallDisconnectReturned ? reconnectAfterStall() : []
        case .waitingToRetry, .curingStaleInProgress, .disconnected:
            return [.emitDisconnected(reason)]
        }
    }

    private mutating func reconnectAfterStall() -> [Action] {
        state = .connecting
        linkDroppedWhileConnecting = false
        return [.callConnect(attempt: attempt)]
    }

    private mutating func becomeReady() -> [Action] {
        isLinkUp = true
        servicesResolved = true
        state = .ready
        return [.cancelTimeout, .completeConnect(nil)]
    }

    private mutating func adapterLost(_ reason: DisconnectReason) -> [Action] {
        let wasUp = isLinkUp
        let wasAttempting = isAttempting
        isLinkUp = false
        servicesResolved = false
        state = .disconnected
        connectAfterDisconnect = nil
        reportedReason = nil
        var actions: [Action] = []
        let error = reason.pendingOperationError
        if wasAttempting { actions += [.cancelTimeout, .completeConnect(error)] }
        if wasUp { actions += [.failPendingOperations(error), .emitDisconnected(reason)] }
        return actions
    }
}
