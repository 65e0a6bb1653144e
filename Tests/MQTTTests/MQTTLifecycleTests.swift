import Testing

@testable import MQTT

@Suite struct MQTTLifecycleTests {
    let refused = MQTTError(.badCredentials, "refused")
    let lost = MQTTError(.connectionLost, "lost")

    @Test func connectThenLoseThenReconnect() {
        var lifecycle = MQTTLifecycle()
        #expect(lifecycle.handle(.start(failFast: false)) == [.startLoop])
        #expect(lifecycle.handle(.attemptStarted) == [.publishState(.connecting)])
        #expect(
            lifecycle.handle(.connected(sessionPresent: false)) == [
                .resubscribe(all: true), .publishState(.connected(sessionPresent: false)), .resolveConnectWaiters(nil),
            ])
        #expect(lifecycle.phase == .connected)
        #expect(
            lifecycle.handle(.disconnected(reason: lost, wasConnected: true)) == [
                .publishState(.disconnected(reason: lost)), .releasePendingSubscribes,
            ])
        #expect(lifecycle.phase == .reconnecting)
        // A resumed persistent session only needs the subscriptions the broker has not confirmed.
        #expect(lifecycle.handle(.connected(sessionPresent: true)).contains(.resubscribe(all: false)))
    }

    @Test func failFastStartStopsOnTheFirstFailure() {
        var lifecycle = MQTTLifecycle()
        _ = lifecycle.handle(.start(failFast: true))
        let actions = lifecycle.handle(.disconnected(reason: refused, wasConnected: false))
        #expect(actions.contains(.resolveConnectWaiters(refused)))
        #expect(actions.contains(.stopLoop))
        #expect(lifecycle.phase == .stopping)
        #expect(
            lifecycle.handle(.loopStopped) == [
                .publishState(.disconnected(reason: refused)), .failInFlight(MQTTLifecycle.stoppedError),
                .finishSubscriptions, .resolveStopWaiters,
            ])
        #expect(lifecycle.phase == .idle)
    }

    @Test func retryingStartKeepsGoingAfterFailures() {
        var lifecycle = MQTTLifecycle()
        _ = lifecycle.handle(.start(failFast: false))
        #expect(
            lifecycle.handle(.disconnected(reason: refused, wasConnected: false)) == [
                .publishState(.disconnected(reason: refused)), .releasePendingSubscribes,
            ])
        #expect(lifecycle.phase == .starting(failFast: false))
    }

    @Test func stopFailsInFlightOnlyWhenTheThreadHasFinished() {
        var lifecycle = MQTTLifecycle()
        _ = lifecycle.handle(.start(failFast: false))
        _ = lifecycle.handle(.connected(sessionPresent: false))
        #expect(lifecycle.handle(.stop) == [.stopLoop, .resolveConnectWaiters(MQTTLifecycle.stoppedError)])
        #expect(lifecycle.handle(.disconnected(reason: nil, wasConnected: true)) == [])
        #expect(lifecycle.handle(.start(failFast: false)) == [])
        #expect(lifecycle.handle(.loopStopped).contains(.failInFlight(MQTTLifecycle.stoppedError)))
        #expect(lifecycle.handle(.stop) == [.resolveStopWaiters])
    }
}
