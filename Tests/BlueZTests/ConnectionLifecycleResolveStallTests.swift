import BlueZ
import Bluetooth
import Testing

/// A cached device whose `ServicesResolved` does not come after the link is up (bluetoothd's MTU exchange
/// unanswered) is disconnected and connected once more within the same attempt and deadline.
@Suite struct ConnectionLifecycleResolveStallTests {
    let timeout = Duration.seconds(30)
    let limit = Duration.seconds(5)

    /// Requested, link up, `Connect` returned for a device with cached services: the resolve timer runs.
    private func linkUpOnCachedDevice() -> ConnectionLifecycle {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectedChanged(true))
        #expect(
            machine.handle(.connectSucceeded(attempt: 1, servicesCached: true)) == [
                .startResolveTimer(attempt: 1, round: 1, limit)
            ])
        #expect(machine.state == .resolvingServices)
        return machine
    }

    @Test func aStalledResolveDisconnectsThenConnectsAgainWithinTheAttempt() {
        var machine = linkUpOnCachedDevice()
        #expect(machine.handle(.resolveTimerFired(attempt: 1, round: 1)) == [.callDisconnect])
        #expect(machine.state == .recoveringStalledResolve)
        #expect(machine.peripheralState == .connecting)
        // bluetoothd answers Disconnect first, then reports the link down: Connect only after both,
        // and nobody is told of a disconnect (the link was never handed out).
        #expect(machine.handle(.cureFinished(attempt: 1)) == [])
        #expect(machine.handle(.connectedChanged(false)) == [.callConnect(attempt: 1)])
        #expect(machine.attempt == 1)
        _ = machine.handle(.connectedChanged(true))
        // One reconnect per attempt: the second link-up waits for the deadline alone.
        #expect(machine.handle(.connectSucceeded(attempt: 1, servicesCached: true)) == [])
        #expect(machine.handle(.servicesResolvedChanged(true)) == [.cancelTimeout, .completeConnect(nil)])
        #expect(machine.state == .ready)
    }

    @Test func theLinkMayGoDownBeforeTheDisconnectReply() {
        var machine = linkUpOnCachedDevice()
        _ = machine.handle(.resolveTimerFired(attempt: 1, round: 1))
        #expect(machine.handle(.connectedChanged(false)) == [])
        #expect(machine.handle(.cureFinished(attempt: 1)) == [.callConnect(attempt: 1)])
        #expect(machine.state == .connecting)
    }

    @Test func servicesResolvedInTimeCancelsNothingAndTheLateTimerIsIgnored() {
        var machine = linkUpOnCachedDevice()
        #expect(machine.handle(.servicesResolvedChanged(true)) == [.cancelTimeout, .completeConnect(nil)])
        #expect(machine.handle(.resolveTimerFired(attempt: 1, round: 1)) == [])
        #expect(machine.state == .ready)
    }

    @Test func servicesResolvedDuringTheRecoveryDoesNotHandOutTheLinkBeingDropped() {
        var machine = linkUpOnCachedDevice()
        _ = machine.handle(.resolveTimerFired(attempt: 1, round: 1))
        #expect(machine.handle(.servicesResolvedChanged(true)) == [])
        #expect(machine.state == .recoveringStalledResolve)
    }

    @Test func aDeviceWithoutACacheWaitsForTheDeadlineAlone() {
        var machine = ConnectionLifecycle()
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.handle(.connectSucceeded(attempt: 1, servicesCached: false)) == [])
        #expect(machine.state == .resolvingServices)
    }

    @Test func noLimitConfiguredMeansNoTimer() {
        var configuration = ConnectionLifecycle.Configuration()
        configuration.cachedResolveTimeout = nil
        var machine = ConnectionLifecycle(configuration: configuration)
        _ = machine.handle(.connectRequested(timeout: timeout))
        #expect(machine.handle(.connectSucceeded(attempt: 1, servicesCached: true)) == [])
    }

    @Test func theDeadlineStillBoundsTheRecovery() throws {
        var machine = linkUpOnCachedDevice()
        _ = machine.handle(.resolveTimerFired(attempt: 1, round: 1))
        let actions = machine.handle(.timeoutFired(attempt: 1))
        #expect(actions.last == .callDisconnect)
        let error = try #require(actions.compactMap { if case .completeConnect(let e) = $0 { e } else { nil } }.first)
        #expect(error.code == .connectionTimeout)
        #expect(machine.state == .disconnecting)
    }

    @Test func aTimerOfAnEarlierLinkUpIsIgnored() {
        var configuration = ConnectionLifecycle.Configuration()
        configuration.resolveStallRetries = 2
        var machine = ConnectionLifecycle(configuration: configuration)
        _ = machine.handle(.connectRequested(timeout: timeout))
        _ = machine.handle(.connectSucceeded(attempt: 1, servicesCached: true))
        _ = machine.handle(.resolveTimerFired(attempt: 1, round: 1))
        _ = machine.handle(.cureFinished(attempt: 1))
        _ = machine.handle(.connectedChanged(false))
        #expect(
            machine.handle(.connectSucceeded(attempt: 1, servicesCached: true)) == [
                .startResolveTimer(attempt: 1, round: 2, limit)
            ])
        #expect(machine.handle(.resolveTimerFired(attempt: 1, round: 1)) == [])
        #expect(machine.state == .resolvingServices)
        #expect(machine.handle(.resolveTimerFired(attempt: 1, round: 2)) == [.callDisconnect])
    }

    @Test func cancellingDuringTheRecoveryFailsTheCallers() throws {
        var machine = linkUpOnCachedDevice()
        _ = machine.handle(.resolveTimerFired(attempt: 1, round: 1))
        let actions = machine.handle(.cancelRequested)
        let error = try #require(actions.compactMap { if case .completeConnect(let e) = $0 { e } else { nil } }.first)
        #expect(error.code == .operationCancelled)
    }
}
