import Foundation
import TestSupport
import Testing

@testable import MQTT

@Suite struct MQTTTopicTests {
    @Test(arguments: [
        ("a/b/c", "a/b/c", true), ("a/+/c", "a/b/c", true), ("a/+/c", "a/b/d", false), ("a/#", "a", true),
        ("a/#", "a/b/c", true), ("#", "a/b", true), ("+", "a", true), ("+", "a/b", false), ("+/+", "/b", true),
        ("a/+", "a/", true), ("a/b", "a/b/c", false), ("a/b/c", "a/b", false), ("#", "$SYS/broker", false),
        ("+/broker", "$SYS/broker", false), ("$SYS/#", "$SYS/broker", true), ("$share/g/a/+", "a/b", true),
        ("$share/g/a/+", "$share/g/a/b", false),
    ])
    func filterMatching(filter: String, topic: String, expected: Bool) {
        #expect(MQTTTopic.matches(filter: filter, topic: topic) == expected, "\(filter) vs \(topic)")
    }

    @Test func publishTopicsRejectWildcardsAndEmptiness() {
        for bad in ["", "a/+", "a/#", "#", "a\u{0}b"] {
            #expect(throws: MQTTError.self) { try MQTTTopic.validateName(bad) }
            do { try MQTTTopic.validateName(bad) } catch { #expect(error.code == .invalidTopic) }
        }
        #expect(throws: Never.self) { try MQTTTopic.validateName("blebridge/lamp/set") }
    }

    @Test func filtersPlaceWildcardsOnlyAsWholeLevels() {
        for good in ["#", "+", "a/+/b", "a/#", "+/+/#", "$share/group/a/#"] {
            #expect(throws: Never.self) { try MQTTTopic.validateFilter(good) }
        }
        for bad in ["", "a/#/b", "a#", "a/b+", "+a/b", "$share/group", "$share//a"] {
            #expect(throws: MQTTError.self, "\(bad)") { try MQTTTopic.validateFilter(bad) }
        }
    }
}

@Suite struct MQTTBrokerAddressTests {
    @Test func parsesSchemesHostsAndPorts() throws {
        #expect(
            try MQTTBrokerAddress(url: "mqtt://127.0.0.1:1884")
                == MQTTBrokerAddress(host: "127.0.0.1", port: 1884, usesTLS: false))
        #expect(
            try MQTTBrokerAddress(url: "mqtt://broker.local")
                == MQTTBrokerAddress(host: "broker.local", port: 1883, usesTLS: false))
        #expect(
            try MQTTBrokerAddress(url: "mqtts://broker.local/")
                == MQTTBrokerAddress(host: "broker.local", port: 8883, usesTLS: true))
        #expect(
            try MQTTBrokerAddress(url: "mqtt://[::1]:1999")
                == MQTTBrokerAddress(host: "::1", port: 1999, usesTLS: false))
        #expect(try MQTTBrokerAddress(url: "mqtt://[::1]:1999").description == "mqtt://[::1]:1999")
    }

    @Test(arguments: [
        "http://x", "mqtt://", "mqtt://host:0", "mqtt://host:70000", "mqtt://u:p@host", "mqtt://host/path",
        "mqtt://[::1",
    ])
    func rejectsWhatIsNotABrokerURL(url: String) {
        #expect {
            try MQTTBrokerAddress(url: url)
        } throws: { error in
            (error as? MQTTError)?.code == .invalidConfiguration
                && (error as? MQTTError)?.message.contains("mqtt://host") == true
        }
    }
}

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

@Suite struct MQTTSecretTests {
    @Test func readsFilesWithoutTheTrailingNewlineAndEnvironmentVariables() throws {
        let directory = try TemporaryDirectory(prefix: "mqtt-secret")
        let file = try directory.write("pw", "s3cret\n").path
        #expect(try MQTTSecret.file(file).resolve() == "s3cret")
        setenv("BLEBRIDGE_TEST_MQTT_PASSWORD", "from-env", 1)
        #expect(try MQTTSecret.environment("BLEBRIDGE_TEST_MQTT_PASSWORD").resolve() == "from-env")
        #expect(!MQTTSecret.value("hunter2").description.contains("hunter2"))
    }

    @Test func missingSourcesAreConfigurationErrors() {
        #expect {
            try MQTTSecret.file("/nonexistent/pw").resolve()
        } throws: { ($0 as? MQTTError)?.code == .invalidConfiguration }
        #expect {
            try MQTTSecret.environment("BLEBRIDGE_TEST_SURELY_UNSET_VARIABLE").resolve()
        } throws: { ($0 as? MQTTError)?.message.contains("BLEBRIDGE_TEST_SURELY_UNSET_VARIABLE") == true }
    }
}
