import Bluetooth
import Testing

/// Always returns the same word: all zeros gives the bottom of every range, all ones the top.
struct ConstantGenerator: RandomNumberGenerator {
    let value: UInt64
    mutating func next() -> UInt64 { value }
}

@Suite struct ReconnectPolicyTests {
    let timeout = BluetoothError(.connectionTimeout)

    @Test func firstRetryIsBetweenOneAndFiveSeconds() {
        var generator = SeededRandomNumberGenerator(seed: 42)
        for _ in 0..<200 {
            let delay = ReconnectPolicy.default.decision(after: timeout, attempt: 1, using: &generator).delay
            #expect(delay.map { $0 >= .seconds(1) && $0 <= .seconds(5) } == true)
        }
        var low = ConstantGenerator(value: 0)
        #expect(ReconnectPolicy.default.delay(attempt: 1, using: &low) == .seconds(1))
        var high = ConstantGenerator(value: .max)
        let top = ReconnectPolicy.default.delay(attempt: 1, using: &high)
        #expect(top > .milliseconds(4999) && top <= .seconds(5))
        // Full jitter takes at most a quarter off the nominal 20 s of the third attempt.
        let jittered = ReconnectPolicy.default.delay(attempt: 3, using: &high)
        #expect(jittered >= .seconds(15) && jittered < .milliseconds(15001))
    }

    @Test func backsOffExponentiallyUpToSixtySeconds() {
        var top = ConstantGenerator(value: 0)  // zero jitter taken off: the nominal delay
        let policy = ReconnectPolicy.default
        let delays = (2...8).map { policy.delay(attempt: $0, using: &top) }
        #expect(delays == [10, 20, 40, 60, 60, 60, 60].map { Duration.seconds($0) })
        var generator = SeededRandomNumberGenerator(seed: 7)
        for attempt in 1...40 {
            let delay = policy.delay(attempt: attempt, using: &generator)
            #expect(delay >= .seconds(1) && delay <= .seconds(60))
        }
    }

    @Test func jitterSpreadsDelays() {
        var generator = SeededRandomNumberGenerator(seed: 1)
        let delays = Set((0..<20).map { _ in ReconnectPolicy.default.delay(attempt: 3, using: &generator) })
        #expect(delays.count > 10)
        #expect(delays.allSatisfy { $0 >= .seconds(15) && $0 <= .seconds(20) })
    }

    @Test(arguments: [
        BluetoothError.Code.connectionTimeout, .connectionFailed, .peripheralDisconnected, .inProgress, .resetting,
        .notConnected,
    ])
    func retriesTransientErrors(_ code: BluetoothError.Code) {
        var generator = SeededRandomNumberGenerator(seed: 3)
        #expect(
            ReconnectPolicy.default.decision(after: BluetoothError(code), attempt: 1, using: &generator).delay != nil)
    }

    @Test(arguments: [
        BluetoothError.Code.operationNotSupported, .invalidParameters, .insufficientAuthentication,
        .operationCancelled, .writeNotPermitted,
    ])
    func doesNotRetryPermanentErrors(_ code: BluetoothError.Code) {
        var generator = SeededRandomNumberGenerator(seed: 3)
        let decision = ReconnectPolicy.default.decision(after: BluetoothError(code), attempt: 1, using: &generator)
        #expect(decision == .giveUp(code))
    }

    @Test func backoffCountsFailuresAndResets() {
        var generator = ConstantGenerator(value: 0)
        var backoff = ReconnectBackoff(policy: ReconnectPolicy(maximumAttempts: 3))
        #expect(backoff.next(after: timeout, using: &generator) == .retry(after: .seconds(1)))
        #expect(backoff.next(after: timeout, using: &generator) == .retry(after: .seconds(10)))
        #expect(backoff.failures == 2)
        #expect(backoff.next(after: timeout, using: &generator) == .retry(after: .seconds(20)))
        #expect(backoff.next(after: timeout, using: &generator) == .giveUp(.connectionTimeout))
        backoff.reset()
        #expect(backoff.failures == 0)
        #expect(backoff.next(after: timeout, using: &generator) == .retry(after: .seconds(1)))
    }
}
