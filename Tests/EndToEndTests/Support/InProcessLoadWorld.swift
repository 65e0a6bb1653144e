import BlueZSimulator
import Configuration
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// A gateway running in the test process (so a test can hold its notify thread), streaming
/// `devices` of the simulator's load devices (`load00`…, 20 values/s each) to a real broker over a
/// private bus, with a real outbox: the world of `PowerOffDrainTests` and `DisconnectDrainTests`.
final class InProcessLoadWorld: Sendable {
    let bus: DBusDaemonFixture
    let simulator: BlueZSimulator
    let broker: MosquittoFixture
    let recorder: MQTTRecorder
    let directory: TemporaryDirectory
    let gateway: Gateway
    let devices: Int

    /// Started, and every device published (an issue is recorded otherwise).
    init(devices: Int, prefix: String) async throws {
        self.devices = devices
        bus = try await DBusDaemonFixture()
        simulator = BlueZSimulator(scenario: try Scenario.load("load"))
        try await simulator.start(busAddress: bus.address)
        broker = try await MosquittoFixture()
        recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        directory = try TemporaryDirectory(prefix: prefix)
        var object = try GatewayProcess.repositoryConfiguration()
        ShutdownDrainTests.streamLoad(devices, in: &object)
        if var bluetooth = object["bluetooth"] as? [String: Any] {
            bluetooth["max_connections"] = devices
            object["bluetooth"] = bluetooth
        }
        let configuration = try ConfigurationLoader().decode(JSONSerialization.data(withJSONObject: object))
        gateway = try await Gateway(
            configuration: configuration,
            options: GatewayOptions(
                busAddress: bus.address, brokerURL: broker.url, outboxPath: directory.file("outbox.sqlite").path))
        try await gateway.start()
        try await simulator.setLoad(devices: devices, rate: 20)
        let streaming = await recorder.wait(timeout: .seconds(60)) { messages in
            let topics = Set(messages.map(\.topic))
            return (0..<devices).allSatisfy { topics.contains(String(format: "blebridge/load%02d", $0)) }
        }
        #expect(streaming, "not every device published")
    }

    func shutdown() async {
        await gateway.stop()
        await recorder.close()
        await simulator.stop()
        await broker.stop()
        await bus.stop()
    }
}
