import BlueZSimulator
import Foundation
import MQTT
import Outbox
import TestSupport
import Testing

/// Faults of issue 8: link loss, adapter power cycle, bluetoothd restart, connect aborts,
/// broker outage, outbox locked by another process, gateway SIGKILL, pool rotation.
@Suite(.serialized) struct FaultTests {
    /// Injects a heart-rate value the test can recognise: 16-bit format, above anything the
    /// simulator's generator produces (it stays below 200 bpm).
    static func beat(_ world: SimulatedWorld, _ bpm: UInt16) async throws {
        try await world.simulator.setCharacteristicValue(
            address: SimulatedWorld.strap, uuid: "2a37", value: [0x01, UInt8(bpm & 0xFF), UInt8(bpm >> 8)], notify: true
        )
    }

    static func sawBeat(_ world: SimulatedWorld, _ bpm: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await world.state("hr_strap", timeout: timeout) { ($0["heart_rate"] as? Int) == bpm } != nil
    }

    /// Keeps injecting `bpm` until the gateway publishes it (notifications resumed), or times out.
    static func resumes(_ world: SimulatedWorld, _ bpm: UInt16, timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            try? await beat(world, bpm)
            if await sawBeat(world, Int(bpm), timeout: .milliseconds(500)) { return true }
        }
        return false
    }

    @Test func notificationsResumeAfterLinkLossPowerCycleAndBluetoothdRestart() async throws {
        let world = try await SimulatedWorld()
        #expect(try await Self.resumes(world, 1201), "never subscribed; log: \(world.gateway.log.suffix(3000))")

        try await world.simulator.disconnect(address: SimulatedWorld.strap)
        #expect(await world.recorder.first(on: "blebridge/hr_strap/availability") { $0.text == "offline" } != nil)
        #expect(
            try await Self.resumes(world, 1202), "no resume after link loss; log: \(world.gateway.log.suffix(3000))"
        )
        let snapshot = try await world.simulator.snapshot(address: SimulatedWorld.strap)
        #expect(snapshot.notifying.contains { $0.hasPrefix("00002a37") })

        await world.simulator.setPowered(false)
        try await Task.sleep(for: .seconds(1))
        await world.simulator.setPowered(true)
        #expect(
            try await Self.resumes(world, 1203),
            "no resume after power cycle; log: \(world.gateway.log.suffix(3000))")

        try await world.simulator.restartBluez(downtime: .seconds(1))
        #expect(try await Self.resumes(world, 1204, timeout: .seconds(45)), "no resume after bluetoothd restart")
        #expect(world.gateway.process.isRunning)
        await world.shutdown()
    }

    @Test func connectAbortsAreRetried() async throws {
        let world = try await SimulatedWorld(edit: { configuration in
            // Only the strap, so its connect is the first one the simulator sees.
            configuration["devices"] = (configuration["devices"] as? [[String: Any]])?.filter {
                $0["id"] as? String == "hr_strap"
            }
            configuration["commands"] = ["raw_gatt": ["enabled": false, "allow": [Any]()], "rate_limit": "10/s"]
        })
        try await world.simulator.injectConnectFailure(address: SimulatedWorld.strap, .abortByLocal, count: 2)
        #expect(try await Self.resumes(world, 1190, timeout: .seconds(40)), "log: \(world.gateway.log.suffix(3000))")
        await world.shutdown()
    }

    /// Injects `count` distinct heart rates from `first` on, one every `interval`; returns them.
    static func beats(_ world: SimulatedWorld, from first: Int, count: Int, every interval: Duration) async throws
        -> [Int]
    {
        var sent: [Int] = []
        for bpm in first..<(first + count) {
            try await beat(world, UInt16(bpm))
            sent.append(bpm)
            try await Task.sleep(for: interval)
        }
        return sent
    }

    /// Waits until every heart rate in `sent` reached the world's recorder.
    static func delivered(_ sent: [Int], in world: SimulatedWorld) async -> Bool {
        let recorder = world.recorder
        return await recorder.wait(timeout: .seconds(30)) { messages in
            let rates = messages.compactMap { recorder.json($0)?["heart_rate"] as? Int }
            return Set(sent).isSubset(of: Set(rates))
        }
    }

    @Test func brokerDownThirtySecondsLosesNothingAndKeepsOrderAndTimestamps() async throws {
        let world = try await SimulatedWorld()
        #expect(try await Self.resumes(world, 1150), "log: \(world.gateway.log.suffix(3000))")
        await world.broker.stop()
        let outageStart = Date()
        // 30 distinct readings, one a second, while the broker is gone.
        let sent = try await Self.beats(world, from: 1000, count: 30, every: .seconds(1))
        let outageEnd = Date()
        try await world.broker.start()
        // The world's recorder has a persistent session: the broker queues what the gateway
        // delivers before the recorder is back.
        let recorder = world.recorder
        let delivered = await Self.delivered(sent, in: world)
        let states = recorder.all.compactMap(recorder.json)
        let outage = states.filter { ($0["heart_rate"] as? Int).map(sent.contains) == true }
        #expect(delivered, "delivered \(outage.count) of 30; log: \(world.gateway.log.suffix(3000))")
        // In order, each with the time it was taken (during the outage, a second apart).
        let order = outage.compactMap { $0["heart_rate"] as? Int }
        #expect(order.filter(sent.contains) == sent.filter(order.contains))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // The first state showing each value is that reading's own (a later state of another
        // characteristic, e.g. the battery after the reconnect, repeats the merged heart rate with
        // its own, later time).
        var firstShown: [[String: Any]] = []
        var shown: Set<Int> = []
        for state in outage {
            guard let rate = state["heart_rate"] as? Int, shown.insert(rate).inserted else { continue }
            firstShown.append(state)
        }
        let stamps = firstShown.compactMap { ($0["ts"] as? String).flatMap(formatter.date) }
        #expect(stamps.count == sent.count)
        // Within the outage as it really lasted: on a loaded machine the 30 one-second injections
        // took longer than 35 s, and a fixed bound failed a correct run.
        #expect(
            stamps.allSatisfy { $0 >= outageStart.addingTimeInterval(-1) && $0 <= outageEnd.addingTimeInterval(1) },
            "outage \(outageStart) – \(outageEnd); stamps \(stamps)")
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 <= $1 })
        await world.shutdown()
    }

    /// A new field's discovery publish that waits for a broker which stopped answering (frozen:
    /// the connection stays open, no PUBACK comes) must not make the strap look silent. The
    /// gateway's readings loop used to await that publish, so the strap's notifications stopped
    /// counting as activity: its silence watchdog disconnected and reconnected a device that was
    /// reporting all along, and a reading sent during the reconnect was lost (the broker-outage
    /// test above delivered 29 of 30 when its outage began while a discovery publish was in flight).
    @Test func aDiscoveryPublishWaitingForTheBrokerDoesNotSilenceTheStrap() async throws {
        let silence = 3
        let world = try await SimulatedWorld(edit: { configuration in
            configuration["devices"] = (configuration["devices"] as? [[String: Any]])?.map { device in
                guard device["id"] as? String == "hr_strap" else { return device }
                var device = device
                device["subscribe"] = (device["subscribe"] as? [[String: Any]])?.map { subscription in
                    guard subscription["mode"] as? String == "notify" else { return subscription }
                    var subscription = subscription
                    subscription["silence_timeout"] = "\(silence)s"
                    return subscription
                }
                return device
            }
        })
        let subscribed = "device connected and subscribed device=hr_strap"
        #expect(try await Self.resumes(world, 1170), "log: \(world.gateway.log.suffix(3000))")
        world.broker.pause()
        // Energy expended (flags 0x09) is a field the strap has not reported yet: its discovery
        // message is published, and waits for the frozen broker's PUBACK.
        try await world.simulator.setCharacteristicValue(
            address: SimulatedWorld.strap, uuid: "2a37", value: [0x09, 0xA0, 0x04, 0x10, 0x00], notify: true)
        // Real delay, not synchronisation: what is checked is that nothing happens meanwhile. The
        // strap notifies every second throughout; the watchdog would fire after `silence` s.
        try await Task.sleep(for: .seconds(silence * 3))
        world.broker.resume()
        #expect(try await Self.resumes(world, 1171), "log: \(world.gateway.log.suffix(3000))")
        #expect(
            world.gateway.log.components(separatedBy: subscribed).count - 1 == 1,
            "the strap was reconnected; log: \(world.gateway.log.suffix(3000))")
        await world.shutdown()
    }

    /// Issue 19 (D13): after a 30 s outage readings resumed only 19 s after the broker was back,
    /// because the reconnect back-off had grown to 30 s. The gateway now caps it at 5 s
    /// (`Gateway.maximumReconnectDelay`), so the first reading must arrive within 7 s of the broker's
    /// return: the 5 s cap plus 2 s for the TCP connect, CONNACK, and the outbox's first publish
    /// (measured 3.2-5.0 s; the old 30 s cap gave 27.3 s).
    ///
    /// The back-off starts at 250 ms and doubles, each delay scaled by a jitter of ½…1, so it is at
    /// its cap after at most 0.25 + 0.5 + 1 + 2 + 4 = 7.75 s of waiting; a 20 s outage is used
    /// instead of 30 s because by then the old 30 s cap would already wait at least 8 s (16 s × ½),
    /// so this test fails with the old cap on every run, not only on unlucky ones. The broker comes
    /// back right after a refused attempt is logged, so the gateway's whole current delay lies ahead
    /// (the worst case), and the time is the first reading's arrival, not a sleep.
    @Test func readingsResumeWithinTheBackoffCapAfterABrokerOutage() async throws {
        let world = try await SimulatedWorld()
        #expect(try await Self.resumes(world, 1160), "log: \(world.gateway.log.suffix(3000))")
        await world.broker.stop()
        // The simulator keeps streaming; these land in the outbox meanwhile.
        _ = try await Self.beats(world, from: 1300, count: 20, every: .seconds(1))
        let refused = "MQTT reconnect attempt failed"
        let refusalsSoFar = world.gateway.log.components(separatedBy: refused).count
        let refusedAgain = await waitUntil(timeout: .seconds(40), interval: .milliseconds(20)) {
            world.gateway.log.components(separatedBy: refused).count > refusalsSoFar
        }
        #expect(refusedAgain, "no refused attempt logged; log: \(world.gateway.log.suffix(3000))")
        let back = Date()  // before the start: the broker's own start-up time counts against the gateway
        try await world.broker.start()
        let watcher = try await MQTTRecorder(url: world.broker.url)
        try await watcher.subscribe("blebridge/hr_strap")
        // A live delivery (retain false), not the retained state the broker replays on subscribe.
        let arrived = await watcher.wait(timeout: .seconds(30)) { $0.contains { !$0.retain } }
        let first = watcher.arrivals(on: "blebridge/hr_strap").first { !$0.message.retain }
        let delay = first.map { $0.arrival.timeIntervalSince(back) }
        #expect(arrived, "no reading after the broker came back; log: \(world.gateway.log.suffix(3000))")
        #expect(
            delay.map { $0 <= 7 } == true,
            "first reading \(delay.map { String(format: "%.2f s", $0) } ?? "never") after the broker was back")
        print("first reading after the broker's return: \(delay.map { String(format: "%.2f s", $0) } ?? "never")")
        await watcher.close()
        await world.shutdown()
    }

    /// A gateway on the simulator whose outbox commits every reading before it is published
    /// (`outbox.mode` durable: readings meet the outbox's lock at once) and whose health comes every second.
    static func durableWorld() async throws -> SimulatedWorld {
        try await SimulatedWorld(
            healthInterval: "1s",
            edit: { configuration in
                var outbox = configuration["outbox"] as? [String: Any] ?? [:]
                outbox["mode"] = "durable"
                configuration["outbox"] = outbox
            })
    }

    /// Another process (a backup, `sqlite3` by hand) holds the outbox's write lock for longer
    /// than the busy timeout (5 s): the readings offered meanwhile are held in memory and
    /// delivered, in order, once the lock is gone; the health topic says why meanwhile.
    /// Durable mode: in memory-first mode readings acknowledged promptly never meet the lock.
    @Test func anOutboxLockedByAnotherProcessPastItsBusyTimeoutLosesNothing() async throws {
        let world = try await Self.durableWorld()
        #expect(try await Self.resumes(world, 1250), "log: \(world.gateway.log.suffix(3000))")
        let other = try SQLiteConnection(path: world.gateway.outboxPath)
        try other.execute("BEGIN IMMEDIATE")
        let sent = try await Self.beats(world, from: 1300, count: 12, every: .milliseconds(700))
        // The refusal comes once SQLite's busy handler has slept its 5 s budget: it sums the delays
        // it asks for, not the time that passed, so on a loaded machine it ends later (an 8 s gap
        // in the health topic at load 14, the outbox thread waiting meanwhile) than the 8.4 s of
        // beats above. Waited for, not checked once.
        #expect(
            await waitUntil(timeout: .seconds(60)) { world.gateway.log.contains("code=locked") },
            "log: \(world.gateway.log.suffix(3000))")
        // The health topic says so before the lock goes. The refusal alone is not enough: the
        // gateway reads the outbox figures for `bridge/health` on the outbox thread, which the busy
        // handler holds for up to 5 s per attempt, and a COMMIT right after the refusal let the
        // next append clear the error before any health message carried it (2 health messages in
        // 13 s, neither `locked`, in a `make stress` run at load 24).
        let recorder = world.recorder
        #expect(
            await recorder.wait(timeout: .seconds(60)) { messages in
                messages.contains {
                    $0.topic == "blebridge/bridge/health" && recorder.json($0)?["outbox_error"] as? String == "locked"
                }
            }, "log: \(world.gateway.log.suffix(3000))")
        try other.execute("COMMIT")
        let delivered = await Self.delivered(sent, in: world)
        let order = recorder.all.compactMap { recorder.json($0)?["heart_rate"] as? Int }.filter(sent.contains)
        #expect(delivered, "delivered \(Set(order).count) of 12; log: \(world.gateway.log.suffix(3000))")
        var firstSeen: [Int] = []
        for rate in order where !firstSeen.contains(rate) { firstSeen.append(rate) }
        #expect(firstSeen == sent)
        // The log arrives through a pipe; the readings it announces may be faster.
        #expect(await waitUntil(timeout: .seconds(5)) { world.gateway.log.contains("outbox accepts readings again") })
        let health = recorder.on("blebridge/bridge/health").compactMap(recorder.json)
        let locked = health.firstIndex { $0["outbox_error"] as? String == "locked" }
        #expect(locked != nil, "health: \(health.suffix(12))")
        if let locked {
            #expect((health[locked]["outbox_depth"] as? Int ?? 0) > 0)
            #expect(
                await recorder.wait(timeout: .seconds(10)) { messages in
                    messages.filter { $0.topic == "blebridge/bridge/health" }.last.flatMap(recorder.json)?[
                        "outbox_error"] is NSNull
                })
        }
        await world.shutdown()
    }
}
