import Testing

@testable import MQTT

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
