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
///
/// The same holds for a stream a raw `bridge/request/gatt/notify` started (`.rawNotify`: every
/// value on the raw topic, exactly once): `disconnect(_:)` cancelled those streams' tasks. The
/// raw streams' other ends (enabled again, the gateway's stop, turned off) are here too.
/// Serialized: each test runs a 20-device load world (one at a time, as when the gateway used the
/// process's one notify thread).
@Suite(.serialized) struct DisconnectDrainTests {
    static let devices = 4

    @Test(arguments: [InProcessLoadWorld.Stream.subscription, .rawNotify])
    func valuesInTheNotifySocketsWhenTheGatewayDisconnectsArePublished(stream: InProcessLoadWorld.Stream)
        async throws
    {
        let world = try await InProcessLoadWorld(devices: Self.devices, prefix: "disconnect-drain", stream: stream)
        let (simulator, recorder, gateway) = (world.simulator, world.recorder, world.gateway)
        let ble = try #require(await gateway.ble)

        // Hold the notify thread; the devices keep sending into their sockets.
        let hold = try await NotifyThreadHold(of: world, devices: Self.devices)
        // The gateway disconnects every device; BlueZ takes each link down.
        for index in 0..<Self.devices { await ble.disconnect(String(format: "load%02d", index)) }
        #expect(await Self.linksDown(simulator), "the links did not go down")
        let sent = await simulator.loadStatistics().lastSequences
        hold.release()
        await hold.expectNothingLost(
            devices: Self.devices, sent: sent, simulator: simulator, recorder: recorder, rawTopic: stream == .rawNotify)

        await world.shutdown()
    }

    /// A raw stream enabled again while it runs goes on as one stream (no value twice, none lost),
    /// and a gateway stop, which disconnects every device, publishes what the raw streams' sockets
    /// still held (`BLELink.stop` cancelled those streams' tasks before, as `disconnect(_:)` did).
    @Test func aRawStreamEnabledAgainGoesOnAsOneAndAStopPublishesWhatItsSocketHeld() async throws {
        let world = try await InProcessLoadWorld(devices: Self.devices, prefix: "raw-notify-stop", stream: .rawNotify)
        let (simulator, recorder, gateway) = (world.simulator, world.recorder, world.gateway)

        let hold = try await NotifyThreadHold(of: world, devices: Self.devices)
        for device in 0..<Self.devices {
            let answer = try await world.notify(device, enable: true)
            #expect(answer == "ok", "gatt/notify again of load\(device): \(answer ?? "no answer")")
        }
        // The stop disconnects every device and waits (within its bound) for the sockets' ends.
        let stopped = Task { await gateway.stop() }
        #expect(await Self.linksDown(simulator), "the links did not go down")
        let sent = await simulator.loadStatistics().lastSequences
        hold.release()
        await stopped.value
        await hold.expectNothingLost(
            devices: Self.devices, sent: sent, simulator: simulator, recorder: recorder, rawTopic: true)

        await world.shutdown()
    }

    /// `"enable":false` still stops a raw stream at once: what its socket took after the answer
    /// (here, everything it took while the notify thread was held) is not published, while the
    /// other devices' streams go on and publish theirs.
    @Test func aRawStreamDisabledStopsAtOnce() async throws {
        let world = try await InProcessLoadWorld(devices: Self.devices, prefix: "raw-notify-off", stream: .rawNotify)
        let (simulator, recorder) = (world.simulator, world.recorder)
        let last = Self.devices - 1

        let hold = try await NotifyThreadHold(of: world, devices: Self.devices)
        let answer = try await world.notify(last, enable: false)
        #expect(answer == "ok", "gatt/notify off of load\(last): \(answer ?? "no answer")")
        let sent = await simulator.loadStatistics().lastSequences
        hold.release()
        // Once the other devices' values taken while the thread was held are published, the thread
        // has read the sockets on.
        await hold.expectNothingLost(
            devices: last, sent: sent, simulator: simulator, recorder: recorder, rawTopic: true)
        let afterOff = ShutdownDrainTests.sequences(
            recorder.on(InProcessLoadWorld.rawTopic(last)).map { ($0.topic, $0.payload) }
        )[last, default: []].filter { $0 > hold.atHold[last] }
        #expect(afterOff.isEmpty, "load\(last) published after its stream was turned off: \(afterOff.sorted())")

        await world.shutdown()
    }

    /// Whether BlueZ reports every load device's link down (waiting for it).
    static func linksDown(_ simulator: BlueZSimulator) async -> Bool {
        let addresses = (0..<Self.devices).map { String(format: "C0:FF:EE:10:00:%02X", $0) }
        return await waitUntil {
            for address in addresses where (try? await simulator.snapshot(address: address))?.connected != false {
                return false
            }
            return true
        }
    }
}
