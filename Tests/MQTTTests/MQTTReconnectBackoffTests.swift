import Testing

@testable import MQTT

@Suite struct MQTTReconnectBackoffTests {
    @Test func doublesUpToTheMaximumAndResets() {
        var backoff = MQTTReconnectBackoff(minimum: .milliseconds(100), maximum: .seconds(1))
        let delays = (0..<6).map { _ in backoff.nextDelay(jitter: 1) }
        #expect(
            delays == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        backoff.reset()
        #expect(backoff.nextDelay(jitter: 1) == .milliseconds(100))
    }

    @Test func jitterScalesIntoTheUpperHalf() {
        var backoff = MQTTReconnectBackoff(minimum: .milliseconds(100), maximum: .seconds(30))
        _ = backoff.nextDelay(jitter: 0)
        _ = backoff.nextDelay(jitter: 0)
        #expect(backoff.nextDelay(jitter: 0) == .milliseconds(200))  // 400 ms halved
        for _ in 0..<100 { _ = backoff.nextDelay(jitter: 0.5) }
        #expect(backoff.nextDelay(jitter: 0.5) == .milliseconds(22_500))
    }
}
