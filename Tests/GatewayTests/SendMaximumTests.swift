import Configuration
import Foundation
import Testing

@testable import Gateway

/// The readings' window (`outbox.inflight`) is on the wire at once: libmosquitto's send maximum is
/// the window plus room for the gateway's own messages (issue 20; libmosquitto kept 20 without it).
@Suite struct SendMaximumTests {
    @Test(arguments: [nil, 1, 200, 65535] as [Int?])
    func theSendMaximumCoversTheReadingsWindow(inflight: Int?) throws {
        let outbox = inflight.map { #"{"outbox": {"inflight": \#($0)}}"# } ?? "{}"
        let configuration = try ConfigurationLoader().decode(Data(outbox.utf8))
        let mqtt = try Gateway.mqttConfiguration(configuration, options: GatewayOptions())
        let window = inflight ?? 64
        #expect(mqtt.sendMaximum == min(65535, window + Gateway.ownMessagesInFlight))
    }
}
