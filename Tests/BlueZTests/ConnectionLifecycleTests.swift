import BlueZ
import Bluetooth
import Testing

@Suite struct ConnectionLifecycleTests {
    let timeout = Duration.seconds(30)

    @Test func connectCompletesOnlyWhenServicesAreResolved() {
        var machine = ConnectionLifecycle()
        #expect(
            machine.handle(.connectRequested(timeout: timeout)) == [
                .startTimeout(attempt: 1, timeout), .callConnect(attempt: 1),
            ])
        #expect(machine.peripheralState == .connecting)
        #expect(machine.handle(.connectedChanged(true)) == [])
        #expect(machine.handle(.connectSucceeded(attempt: 1)) == [])
        #expect(machine.state == .resolvingServices)
        #expect(machine.handle(.servicesResolvedChanged(true)) == [.cancelTimeout, .completeConnect(nil)])
        #expect(machine.state == .ready)
        #expect(machine.peripheralState == .connected)
    }

    @Test func servicesResolvedBeforeTheConnectReplyAlsoWorks() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectedChanged(true))
        #expect(machine.handle(.servicesResolvedChanged(true)) == [.cancelTimeout, .completeConnect(nil)])
        #expect(machine.handle(.connectSucceeded(attempt: 1)) == [])
        #expect(machine.state == .ready)
    }

    @Test func secondConnectJoinsTheFirstAndReadyConnectReturnsAtOnce() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.handle(.connectRequested(timeout: .seconds(5))) == [])
        _ = machine.handle(.connectSucceeded(attempt: 1))
        _ = machine.handle(.servicesResolvedChanged(true))
        #expect(machine.handle(.connectRequested(timeout: timeout)) == [.completeConnect(nil)])
        #expect(machine.attempt == 1)
    }

    @Test func alreadyConnectedDeviceNeedsNoCall() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectedChanged(true))
        _ = machine.handle(.servicesResolvedChanged(true))
        #expect(machine.handle(.connectRequested(timeout: timeout)) == [.completeConnect(nil)])
        #expect(machine.state == .ready)
    }

    @Test func timeoutDisconnectsAndFailsWithConnectionTimeout() throws {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        let actions = machine.handle(.timeoutFired(attempt: 1))
        #expect(actions.first == .cancelTimeout)
        #expect(actions.last == .callDisconnect)
        let error = try #require(actions.compactMap { if case .completeConnect(let e) = $0 { e } else { nil } }.first)
        #expect(error.code == .connectionTimeout)
        #expect(machine.state == .disconnecting)
        // The late Connect reply of the abandoned attempt is ignored.
        #expect(machine.handle(.connectSucceeded(attempt: 1)) == [])
        #expect(machine.handle(.disconnectFinished) == [])
        #expect(machine.state == .disconnected)
        // A stale timer of the old attempt does nothing to a new one.
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.attempt == 2)
        #expect(machine.handle(.timeoutFired(attempt: 1)) == [])
    }

    @Test func inProgressIsRetriedThenCuredWithDisconnect() {
        var machine = ConnectionLifecycle()
        let inProgress = BluetoothError(.inProgress)
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(
            machine.handle(.connectFailed(attempt: 1, inProgress)) == [
                .scheduleRetry(attempt: 1, after: .milliseconds(500))
            ])
        #expect(machine.handle(.retryDue(attempt: 1)) == [.callConnect(attempt: 1)])
        _ = machine.handle(.connectFailed(attempt: 1, inProgress))
        _ = machine.handle(.retryDue(attempt: 1))
        // Third InProgress: stale state, cure with Disconnect then Connect.
        #expect(machine.handle(.connectFailed(attempt: 1, inProgress)) == [.callDisconnect])
        #expect(machine.state == .curingStaleInProgress)
        #expect(machine.handle(.cureFinished(attempt: 1)) == [.callConnect(attempt: 1)])
        // Still InProgress after the cure: give up with the error.
        #expect(
            machine.handle(.connectFailed(attempt: 1, inProgress)) == [
                .cancelTimeout, .completeConnect(inProgress),
            ])
        #expect(machine.state == .disconnected)
    }

    @Test func staleInProgressCureSucceeds() {
        var machine = ConnectionLifecycle(
            configuration: {
                var configuration = ConnectionLifecycle.Configuration()
                configuration.inProgressRetries = 0
                return configuration
            }())
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.handle(.connectFailed(attempt: 1, BluetoothError(.inProgress))) == [.callDisconnect])
        #expect(machine.handle(.cureFinished(attempt: 1)) == [.callConnect(attempt: 1)])
        _ = machine.handle(.connectSucceeded(attempt: 1))
        #expect(machine.handle(.servicesResolvedChanged(true)) == [.cancelTimeout, .completeConnect(nil)])
    }

    @Test func abortByLocalIsRetriedOnceThenReported() {
        var machine = ConnectionLifecycle()
        let abort = BluetoothError(
            bluezName: "org.bluez.Error.Failed", message: "le-connection-abort-by-local", during: .connect)
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(
            machine.handle(.connectFailed(attempt: 1, abort)) == [
                .scheduleRetry(attempt: 1, after: .milliseconds(250))
            ])
        _ = machine.handle(.retryDue(attempt: 1))
        #expect(machine.handle(.connectFailed(attempt: 1, abort)) == [.cancelTimeout, .completeConnect(abort)])
    }

    @Test func permanentConnectErrorFailsAtOnce() {
        var machine = ConnectionLifecycle()
        let error = BluetoothError(.unknownDevice)
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.handle(.connectFailed(attempt: 1, error)) == [.cancelTimeout, .completeConnect(error)])
    }

    @Test func cancelDuringConnectFailsCallersAndDisconnects() throws {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        let actions = machine.handle(.cancelRequested)
        #expect(actions.contains(.callDisconnect))
        let error = try #require(actions.compactMap { if case .completeConnect(let e) = $0 { e } else { nil } }.first)
        #expect(error.code == .operationCancelled)
        #expect(machine.handle(.disconnectFinished) == [])
        #expect(machine.state == .disconnected)
    }

    @Test func remoteDisconnectFailsPendingOperationsAndReports() {
        var machine = readyMachine()
        let actions = machine.handle(.connectedChanged(false))
        #expect(
            actions == [
                .failPendingOperations(DisconnectReason.remote.pendingOperationError), .emitDisconnected(.remote),
            ])
        #expect(machine.state == .disconnected)
        #expect(!machine.servicesResolved)
    }

    @Test func reportedReasonIsUsed() {
        var machine = readyMachine()
        _ = machine.handle(.disconnectReasonReported(.timeout))
        #expect(machine.handle(.connectedChanged(false)).last == .emitDisconnected(.timeout))
    }

    @Test func localDisconnectReportsLocal() {
        var machine = readyMachine()
        #expect(machine.handle(.cancelRequested) == [.callDisconnect])
        #expect(machine.peripheralState == .disconnecting)
        let actions = machine.handle(.connectedChanged(false))
        #expect(actions.last == .emitDisconnected(.local))
        #expect(machine.handle(.disconnectFinished) == [])
        #expect(machine.state == .disconnected)
    }

    @Test func connectWhileDisconnectingStartsAfterwards() {
        var machine = readyMachine()
        _ = machine.handle(.cancelRequested)
        #expect(machine.handle(.connectRequested(timeout: timeout)) == [])
        let actions = machine.handle(.connectedChanged(false))
        #expect(actions.suffix(2) == [.startTimeout(attempt: 2, timeout), .callConnect(attempt: 2)])
        #expect(machine.state == .connecting)
    }

    @Test func linkDropBeforeServicesResolvedFailsTheConnect() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectedChanged(true))
        _ = machine.handle(.connectSucceeded(attempt: 1))
        let actions = machine.handle(.connectedChanged(false))
        #expect(
            actions.contains { if case .completeConnect(let e) = $0 { e?.code == .connectionFailed } else { false } })
        #expect(machine.state == .disconnected)
    }

    /// An aborted link reported before the `Connect` reply (the two reach the lifecycle by
    /// separate tasks) leaves the decision to the reply: the abort is retried, as in the other order.
    @Test func linkDropBeforeTheConnectReplyWaitsForTheReply() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectedChanged(true))
        #expect(machine.handle(.connectedChanged(false)) == [.emitDisconnected(.remote)])
        #expect(machine.state == .connecting)
        let abort = BluetoothError(.connectionFailed, "le-connection-abort-by-local")
        let actions = machine.handle(.connectFailed(attempt: 1, abort))
        #expect(actions == [.scheduleRetry(attempt: 1, after: machine.configuration.abortRetryDelay)])
        #expect(machine.state == .waitingToRetry)
    }

    /// A successful `Connect` reply handled after the link's drop (it was sent before the drop)
    /// fails the attempt at once instead of waiting for `ServicesResolved` until the timeout.
    @Test func aSuccessfulReplyAfterTheLinkDroppedFailsTheConnect() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectedChanged(true))
        _ = machine.handle(.connectedChanged(false))
        let actions = machine.handle(.connectSucceeded(attempt: 1))
        #expect(actions.first == .cancelTimeout)
        #expect(
            actions.contains { if case .completeConnect(let e) = $0 { e?.code == .connectionFailed } else { false } })
        #expect(machine.state == .disconnected)
    }

    @Test func adapterLossEndsEverything() {
        var machine = readyMachine()
        let actions = machine.handle(.adapterLost(.adapterPoweredOff))
        #expect(
            actions == [
                .failPendingOperations(DisconnectReason.adapterPoweredOff.pendingOperationError),
                .emitDisconnected(.adapterPoweredOff),
            ])
        var connecting = ConnectionLifecycle()
        _ = connecting.handle(.connectRequested(timeout: timeout))
        let lost = connecting.handle(.adapterLost(.bluezRestarted))
        #expect(lost == [.cancelTimeout, .completeConnect(BluetoothError(.resetting))])
        #expect(connecting.state == .disconnected)
    }

    @Test func reconnectAfterDisconnectStartsANewAttempt() {
        var machine = readyMachine()
        _ = machine.handle(.connectedChanged(false))
        #expect(
            machine.handle(.connectRequested(timeout: timeout)) == [
                .startTimeout(attempt: 2, timeout), .callConnect(attempt: 2),
            ])
    }

    private func readyMachine() -> ConnectionLifecycle {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectSucceeded(attempt: 1))
        _ = machine.handle(.connectedChanged(true))
        _ = machine.handle(.servicesResolvedChanged(true))
        return machine
    }
}
