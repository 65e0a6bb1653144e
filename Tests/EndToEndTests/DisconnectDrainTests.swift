import BlueZ
import BlueZSimulator
import Configuration
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// A disconnect the gateway decides itself (the pool's idle, silent, released and removed devices,
/// the `disconnect` command: all `BLELink.disconnect(_:)`) loses no value the device had handed to
/// its notify socket before the link went down (issue 19, the case `PowerOffDrainTests` left).
///
/// `disconnect(_:)` cancelled the device's listeners before asking BlueZ to disconnect, so what
/// the notify thread had not read yet went nowhere. Here the notify thread
/// (`NotifySocketPoller.shared`: the gateway runs in this process) is held while the devices send,
/// the gateway disconnects each one, and BlueZ reports the links down; then the thread reads on.
/// Everything else is real: the private bus with the simulator, mosquitto, the outbox.
@Suite struct DisconnectDrainTests {
    static let devices = 4

    @Test func valuesInTheNotifySocketsWhenTheGatewayDisconnectsArePublished() async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = BlueZSimulator(scenario: try Scenario.load("load"))
        try await simulator.start(busAddress: bus.address)
        let broker = try await MosquittoFixture()
        let recorder = try await MQTTRecorder(url: broker.url)
        try await recorder.subscribe("blebridge/#")
        let directory = try TemporaryDirectory(prefix: "disconnect-drain")
        var object = try GatewayProcess.repositoryConfiguration()
        ShutdownDrainTests.streamLoad(Self.devices, in: &object)
        let configuration = try ConfigurationLoader().decode(JSONSerialization.data(withJSONObject: object))
        let gateway = try await Gateway(
            configuration: configuration,
            options: GatewayOptions(
                busAddress: bus.address, brokerURL: broker.url, outboxPath: directory.file("outbox.sqlite").path))
        try await gateway.start()
        try await simulator.setLoad(devices: Self.devices, rate: 20)
        let ids = (0..<Self.devices).map { String(format: "load%02d", $0) }
        let streaming = await recorder.wait(timeout: .seconds(60)) { messages in
            let topics = Set(messages.map(\.topic))
            return ids.allSatisfy { topics.contains("blebridge/\($0)") }
        }
        #expect(streaming, "not every device published")
        let ble = try #require(await gateway.ble)

        // Hold the notify thread; the devices keep sending into their sockets.
        let hold = try await NotifyThreadHold(devices: Self.devices, simulator: simulator)
        // The gateway disconnects every device; BlueZ takes each link down.
        for id in ids { await ble.disconnect(id) }
        let addresses = (0..<Self.devices).map { String(format: "C0:FF:EE:10:00:%02X", $0) }
        let down = await waitUntil {
            for address in addresses where (try? await simulator.snapshot(address: address))?.connected != false {
                return false
            }
            return true
        }
        #expect(down, "the links did not go down")
        let sent = await simulator.loadStatistics().lastSequences
        hold.release()
        await hold.expectNothingLost(devices: Self.devices, sent: sent, simulator: simulator, recorder: recorder)

        await gateway.stop()
        await recorder.close()
        await simulator.stop()
        await broker.stop()
        await bus.stop()
    }
}
