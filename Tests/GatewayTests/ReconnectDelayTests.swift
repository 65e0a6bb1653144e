import Configuration
import Foundation
import Testing

@testable import Gateway

/// Issue 19, D13: after a 30 s broker outage readings resumed only 19 s after the broker was back,
/// because the reconnect back-off had grown to its 30 s maximum.
@Suite struct ReconnectDelayTests {
    @Test func theGatewayProbesTheBrokerAtLeastEveryFiveSeconds() throws {
        let configuration = try ConfigurationLoader().decode(Data("{}".utf8))
        let mqtt = try Gateway.mqttConfiguration(configuration, options: GatewayOptions())
        #expect(mqtt.maximumReconnectDelay <= .seconds(5))
        #expect(mqtt.minimumReconnectDelay <= .seconds(1))
    }
}
