import BlueZSimulator
import Configuration
import Foundation
import MQTT
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Gateway

/// The gateway in this process on a ``ManualClock``: a passive device's availability follows the
/// gateway's clock, not the time the test took. (Everything else is real: the private bus with
/// the simulator, mosquitto, the outbox.)
@Suite struct GatewayClockTests {
    static let bthome = "C0:FF:EE:00:00:03"

    @Test func aSilentPassiveDeviceGoesOfflineWhenTheClockPassesItsTimeToLive() async throws {
        let world = try await World(device: "bthome")
        let (simulator, recorder, clock, configuration) = (
            world.simulator, world.recorder, world.clock, world.configuration
        )
        try await world.start()

        #expect(
            await recorder.first(on: "blebridge/bthome/availability", timeout: .seconds(30)) { $0.text == "online" }
                != nil)
        // Silent from now on (advertisements already on the bus may still arrive).
        try await simulator.setDeviceInRange(address: Self.bthome, false)
        // Five minutes of silence pass on the gateway's clock in no time: offline at the next
        // sweep (every 5 s of the clock). Real time could not do it: the test takes seconds.
        let ttl = configuration.bluetooth.scan.deviceTTL
        // The gateway's timers sleep on the clock (a gateway on the real clock leaves it alone).
        let armed = await withDeadline(.seconds(10)) { () async -> Bool? in
            await clock.sleeping(atLeast: 1)
            return true
        }
        #expect(armed == true, "no timer of the gateway sleeps on its clock")
        clock.advance(by: ttl - .seconds(10))
        // An advertisement that was on the bus when the device went silent may land after an
        // advance and count as seen then: one more advance then makes the silence long enough.
        // Unseen at the start (offline), seen (online), silent past its time to live (offline).
        func offlineAfterOnline(_ messages: [MQTTMessage]) -> Bool {
            let texts = messages.filter { $0.topic == "blebridge/bthome/availability" }.map(\.text)
            return texts.firstIndex(of: "online").map { texts[$0...].contains("offline") } ?? false
        }
        var offline = false
        for _ in 0..<3 where !offline {
            clock.advance(by: .seconds(20))
            offline = await recorder.wait(timeout: .seconds(10), offlineAfterOnline)
        }
        #expect(offline, "\(recorder.on("blebridge/bthome/availability").map(\.text))")
        await world.stop()
    }

    /// Free memory is given back once a burst settled (``FreeMemorySchedule``): the heart-rate
    /// strap's connection is one, and the sweep 5 s later on the gateway's clock gives it back,
    /// once. (Through the option's closure: what glibc gives back cannot be told from outside in a
    /// test; `FreeMemoryTests` checks what the call gives back, the soak its effect, docs/testing.md.)
    @Test func freeMemoryIsGivenBackOnceAConnectionSettled() async throws {
        let releases = Releases()
        let world = try await World(device: "hr_strap") { options in
            options.releaseFreeMemory = { releases.count.add(1, ordering: .relaxed) }
        }
        try await world.start()
        #expect(
            await world.recorder.first(on: "blebridge/hr_strap/availability", timeout: .seconds(30)) {
                $0.text == "online"
            } != nil)
        // Connected with the clock standing still: the burst is not given back yet.
        #expect(releases.count.load(ordering: .relaxed) == 0)
        // The sweep (every 5 s of the clock) after the connection's 5 s of settling gives it back.
        // (Up to three sweeps: the sweep's timer may have been armed after the first move.)
        var given = false
        for _ in 0..<3 where !given {
            world.clock.advance(by: .seconds(5))
            given = await waitUntil(timeout: .seconds(3)) { releases.count.load(ordering: .relaxed) > 0 }
        }
        #expect(releases.count.load(ordering: .relaxed) == 1)
        await world.stop()
    }

    /// A gateway running for the strap alone, once the strap is online.
    static func strapOnline() async throws -> World {
        let world = try await World(device: "hr_strap")
        try await world.start()
        #expect(
            await world.recorder.first(on: "blebridge/hr_strap/availability", timeout: .seconds(30)) {
                $0.text == "online"
            } != nil)
        return world
    }

    /// `stop` returns only once every task the gateway started has ended (its ``TaskScope`` is
    /// closed): the loops over the client's and the pipeline's events, the timers on its clock,
    /// the answer lanes and the command readers. Before, they were cancelled and left to end.
    @Test func stopReturnsOnceEveryTaskOfTheGatewayHasEnded() async throws {
        let world = try await Self.strapOnline()
        #expect(!world.gateway.allTasksEnded)
        // The gateway's own notify thread (issue 20: its run owns its loops) runs until the stop.
        let notifyLoop = try #require(await world.gateway.notifyPoller?.loop)
        #expect(notifyLoop.execute {})
        await world.gateway.stop()
        #expect(world.gateway.allTasksEnded)
        #expect(!notifyLoop.execute {}, "the gateway's notify thread outlived its stop")
        // Its timers on the clock are gone with them (the health tick, the availability sweep, the pool's wake-up).
        #expect(world.clock.sleeperCount == 0)
        await world.stop()
    }

    /// Cancelling the task that runs the gateway stops it as `stop()` does: `run` returns once every
    /// task has ended, the device is disconnected, `offline` is published and the notify thread is gone.
    @Test func cancellingTheRunStopsTheGateway() async throws {
        let world = try await Self.strapOnline()
        let notifyLoop = try #require(await world.gateway.notifyPoller?.loop)
        let run = try #require(world.runs.all.first)
        run.cancel()
        await run.value
        #expect(world.gateway.allTasksEnded)
        #expect(!notifyLoop.execute {}, "the gateway's notify thread outlived the cancelled run")
        #expect(await world.gateway.client.connectionState == .disconnected(reason: nil))
        // The stop's `offline` (the device's last availability; the broker's will is the bridge's).
        #expect(
            await world.recorder.wait { _ in
                world.recorder.on("blebridge/hr_strap/availability").last?.text == "offline"
            })
        #expect(
            await waitUntil { (try? await world.simulator.snapshot(address: SimulatedWorld.strap))?.connected == false }
        )
        await world.stop()
    }

    final class Releases: Sendable {
        let count = Atomic<Int>(0)
    }

    /// The demo scenario on a private bus, mosquitto, and a gateway on a ``ManualClock`` for one
    /// device of the repository's config.json, recording its availability.
    struct World {
        let bus: DBusDaemonFixture
        let simulator: BlueZSimulator
        let broker: MosquittoFixture
        let recorder: MQTTRecorder
        let directory: TemporaryDirectory
        let configuration: BridgeConfiguration
        let clock = ManualClock()
        let gateway: Gateway
        /// The gateway's `run()` once started; it returns after the stop.
        let runs = Recorded<Task<Void, Never>>()

        init(device: String, options change: (inout GatewayOptions) -> Void = { _ in }) async throws {
            bus = try await DBusDaemonFixture()
            simulator = BlueZSimulator(scenario: try Scenario.load("demo"))
            try await simulator.start(busAddress: bus.address)
            broker = try await MosquittoFixture()
            recorder = try await MQTTRecorder(url: broker.url)
            try await recorder.subscribe("blebridge/\(device)/availability")
            directory = try TemporaryDirectory(prefix: "gateway-clock")
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            var configuration = try ConfigurationLoader().load(
                path: root.appendingPathComponent("config.json").path)
            configuration.devices = configuration.devices.filter { $0.id == device }
            self.configuration = configuration
            var options = GatewayOptions(
                busAddress: bus.address, brokerURL: broker.url, outboxPath: directory.file("outbox.sqlite").path)
            options.clock = clock
            change(&options)
            gateway = try await Gateway(configuration: configuration, options: options)
        }

        func start() async throws { runs.append(try await gateway.runInTask()) }

        func stop() async {
            await gateway.stop()
            for run in runs.all { await run.value }
            await recorder.close()
            await simulator.stop()
            await broker.stop()
            await bus.stop()
        }
    }
}
