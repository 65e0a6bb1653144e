import BlueZ
import BlueZSimulator
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
        let world = try await InProcessLoadWorld(devices: Self.devices, prefix: "disconnect-drain")
        let (simulator, recorder, gateway) = (world.simulator, world.recorder, world.gateway)
        let ble = try #require(await gateway.ble)

        // Hold the notify thread; the devices keep sending into their sockets.
        let hold = try await NotifyThreadHold(devices: Self.devices, simulator: simulator)
        // The gateway disconnects every device; BlueZ takes each link down.
        for index in 0..<Self.devices { await ble.disconnect(String(format: "load%02d", index)) }
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

        await world.shutdown()
    }
}
