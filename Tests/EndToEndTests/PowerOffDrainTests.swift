import BlueZ
import BlueZSimulator
import Configuration
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// The adapter powered off while devices stream: no value a device handed to the gateway's notify
/// socket before its link went down is lost (issue 19: a 20-minute soak lost 1–2 values of every
/// one of its 20 devices at one power cycle, all sent in one burst just before it).
///
/// bluetoothd drops the links (`Connected` false; each notify socket closed after what was written
/// to it), then says `Powered` false. The values still in a socket are read by the gateway's notify
/// thread; the link drops and the power-off reach `BLELink` over D-Bus, on another thread, as two
/// streams (disconnections, manager state). A link drop lets its device's listeners go and the
/// socket's last values still reach them; the power-off cancelled every listener left at once, so
/// what the notify thread read after that went nowhere. Here the notify thread
/// (`NotifySocketPoller.shared`: the gateway runs in this process) is held while the devices send
/// and the adapter goes off, until `BLELink` has handled the power-off. Before the fix 15 of 15
/// runs with 16 or 20 devices lost values (10–19 devices 2–3 values each, those whose link drop
/// `BLELink` had not handled before the power-off; with 4 devices only 3 runs of 8).
/// Everything else is real: the private bus with the simulator, mosquitto, the outbox. Other tests
/// of this process that read notify sockets wait while the thread is held (the whole test took
/// 2.8–3.8 s at load 6–10).
///
/// The same holds for a stream a raw `bridge/request/gatt/notify` started (`.rawNotify`: every
/// value on the raw topic, exactly once): the power-off (and each link drop before it) cancelled
/// those streams' tasks, so what the notify thread read after that was lost.
/// Serialized: each case runs a 20-device load world (one at a time, as when the gateway used the
/// process's one notify thread).
@Suite(.serialized) struct PowerOffDrainTests {
    static let devices = 20

    @Test(arguments: [InProcessLoadWorld.Stream.subscription, .rawNotify])
    func valuesInTheNotifySocketsWhenTheAdapterGoesOffArePublished(stream: InProcessLoadWorld.Stream) async throws {
        let world = try await InProcessLoadWorld(devices: Self.devices, prefix: "power-off-drain", stream: stream)
        let (simulator, recorder, gateway) = (world.simulator, world.recorder, world.gateway)

        // Hold the notify thread; the devices keep sending into their sockets.
        let hold = try await NotifyThreadHold(of: world, devices: Self.devices)
        await simulator.setPowered(false)
        let sent = await simulator.loadStatistics().lastSequences
        let handled = await waitUntil {
            guard let ble = await gateway.ble else { return false }
            return await ble.powered == false
        }
        #expect(handled, "the gateway did not handle the power-off")
        hold.release()
        await hold.expectNothingLost(
            devices: Self.devices, sent: sent, simulator: simulator, recorder: recorder, rawTopic: stream == .rawNotify)

        await simulator.setPowered(true)
        await world.shutdown()
    }
}
