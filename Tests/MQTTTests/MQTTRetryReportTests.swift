import Testing

@testable import MQTT

/// One line per failed attempt: "never connected" and "lost" told apart, delays rounded.
@Suite struct MQTTRetryReportTests {
    let broker = "mqtt://127.0.0.1:1883"

    @Test func aBrokerNeverReachedSaysSoAndCountsAttempts() {
        let first = MQTTRetryReport(
            reason: "connection refused", broker: broker, wasConnected: false, everConnected: false, failures: 1,
            retryIn: .nanoseconds(137_876_626))
        #expect(first.level == .warning)
        #expect(first.message == "MQTT broker not reachable (never connected since start); retrying in 0.1s")
        #expect(first.metadata.map(\.key) == ["broker", "reason", "attempt"])
        #expect(first.metadata.last?.value == "1")
        let later = MQTTRetryReport(
            reason: "connection refused", broker: broker, wasConnected: false, everConnected: false, failures: 7,
            retryIn: .seconds(22.4))
        #expect(later.level == .info)
        #expect(later.message.hasSuffix("retrying in 22s"))
    }

    @Test func aLostConnectionIsNotAFailedAttempt() {
        let lost = MQTTRetryReport(
            reason: "connection lost", broker: broker, wasConnected: true, everConnected: true, failures: 0,
            retryIn: .milliseconds(250))
        #expect(lost.level == .warning)
        #expect(lost.message == "MQTT connection lost; retrying in 0.3s")
        #expect(!lost.metadata.contains { $0.key == "attempt" })
        let retry = MQTTRetryReport(
            reason: "connection refused", broker: broker, wasConnected: false, everConnected: true, failures: 1,
            retryIn: .seconds(1))
        #expect(retry.message == "MQTT reconnect attempt failed; retrying in 1.0s")
        #expect(retry.level == .warning)
    }

    @Test func aClientThatStopsSaysNoRetry() {
        let report = MQTTRetryReport(
            reason: "bad password", broker: broker, wasConnected: false, everConnected: false, failures: 1,
            retryIn: nil)
        #expect(report.message == "MQTT broker not reachable (never connected since start)")
    }
}
