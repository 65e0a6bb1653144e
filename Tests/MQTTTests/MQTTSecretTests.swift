import Foundation
import TestSupport
import Testing

@testable import MQTT

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
