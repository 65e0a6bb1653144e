import BlueZSimulator
import DBus
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

/// Load mode: N devices notifying at R Hz with timestamped values, received by a plain D-Bus client.
@Suite struct LoadModeTests {
    /// The load scenario without its own load, at test speed.
    static func simulator() throws -> BlueZSimulator {
        var scenario = try Scenario.load("load")
        scenario.load = nil
        scenario.timing = ScenarioTiming(
            advertisingInterval: .milliseconds(50), staleTimeout: .seconds(30), connectDelay: .milliseconds(1),
            resolveDelay: .milliseconds(1), connectTimeout: .seconds(3), mtu: 247)
        return BlueZSimulator(scenario: scenario, options: .init(seed: 9, disconnectDelay: .milliseconds(50)))
    }

    /// Connects every load device, enables notifications, and counts values for `seconds`.
    static func measure(devices: Int, rate: Double, seconds: Double) async throws -> (
        received: Int, gaps: Int, statistics: LoadStatistics, latencyP50: Double, last: [UInt32: UInt64],
        stamps: [UInt32: [UInt64: UInt64]], sendTimes: [(first: UInt64, nanoseconds: [UInt64])]
    ) {
        let bus = try await DBusDaemonFixture()
        let simulator = try Self.simulator()
        defer { Task { await bus.stop() } }
        try await simulator.start(busAddress: bus.address)
        try await simulator.setLoad(devices: devices, rate: 1)  // creates the devices
        let client = try await DBusConnection(address: bus.address)
        defer { client.close() }
        func call(_ path: String, _ interface: String, _ method: String) async throws {
            _ = try await client.call(
                destination: "org.bluez", path: try DBusObjectPath(path), interface: interface, method: method)
        }
        try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let paths = (0..<devices).map {
            "/org/bluez/hci0/dev_C0_FF_EE_10_\(String(format: "%02X", $0 >> 8))_\(String(format: "%02X", $0 & 0xFF))"
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while clock.now < deadline {
            let objects = try await client.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects")
            let known = Set(objects.first?.asDictionaryEntries?.compactMap { $0.key.asObjectPath?.rawValue } ?? [])
            if paths.allSatisfy(known.contains) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let counts = Mutex(
            (
                countFrom: UInt64.max, received: 0, gaps: 0, last: [UInt32: UInt64](), latencies: [Double](),
                stamps: [UInt32: [UInt64: UInt64]]()
            ))
        let stream = try await client.signals(
            matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        let consumer = Task {
            for await signal in stream {
                guard signal.arguments.count == 3, let changed = signal.arguments[1].asDictionary,
                    let bytes = changed["Value"]?.asBytes, let value = LoadValue(bytes: bytes)
                else { continue }
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                let latency =
                    Double(UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))
                    - Double(value.timestampNanoseconds)
                counts.withLock { state in
                    if value.timestampNanoseconds >= state.countFrom { state.received += 1 }
                    if let last = state.last[value.device], value.sequence != last + 1 { state.gaps += 1 }
                    state.last[value.device] = value.sequence
                    if state.stamps.count < 100_000 {
                        state.stamps[value.device, default: [:]][value.sequence] = value.timestampNanoseconds
                    }
                    if state.latencies.count < 100_000 { state.latencies.append(latency / 1e6) }
                }
            }
        }
        func servicesResolved(_ path: String) async throws -> Bool {
            let reply = try await client.call(
                destination: "org.bluez", path: try DBusObjectPath(path), interface: "org.freedesktop.DBus.Properties",
                method: "Get", arguments: [.string("org.bluez.Device1"), .string("ServicesResolved")])
            return reply.first?.unwrappedVariant.asBool == true
        }
        for path in paths {
            // Connect answers with the link up; GATT discovery ends with ServicesResolved after the reply.
            try await call(path, "org.bluez.Device1", "Connect")
            let resolvedBy = clock.now + .seconds(10)
            while try await !servicesResolved(path), clock.now < resolvedBy {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await call(path + "/service000c/char000d", "org.bluez.GattCharacteristic1", "StartNotify")
        }
        var switchTime = timespec()
        clock_gettime(CLOCK_REALTIME, &switchTime)
        let countFrom = UInt64(switchTime.tv_sec) * 1_000_000_000 + UInt64(switchTime.tv_nsec)
        counts.withLock { $0.countFrom = countFrom }  // values stamped from here on belong to the measured run
        try await simulator.setLoad(devices: devices, rate: rate)  // everyone listens: measure from here
        try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
        try await simulator.setLoad(devices: 0, rate: 0)
        let statistics = await simulator.loadStatistics()
        // Wait (bounded) for values still on their way through the bus: each device's stream is in
        // order, so once the consumer has seen every device's last sequence, everything sent has
        // arrived (a lost or late value still fails the expectations on `received`, `gaps`, `last`).
        _ = await waitUntil {
            counts.withLock { state in
                state.received >= Int(statistics.sent)
                    && (0..<devices).map { state.last[UInt32($0)] ?? 0 } == statistics.lastSequences
            }
        }
        consumer.cancel()
        var sendTimes: [(first: UInt64, nanoseconds: [UInt64])] = []
        for device in 0..<devices { sendTimes.append(await simulator.loadSendTimes(device: device)) }
        await simulator.stop()
        let result = counts.withLock { $0 }
        let sorted = result.latencies.sorted()
        return (
            result.received, result.gaps, statistics, sorted.isEmpty ? 0 : sorted[sorted.count / 2], result.last,
            result.stamps, sendTimes
        )
    }

    @Test func devicesNotifyTimestampedSequencesAtTheRequestedRate() async throws {
        let result = try await Self.measure(devices: 4, rate: 50, seconds: 1)
        // 4 devices × 50 Hz: the values sent match the elapsed time, none lost, sequences contiguous.
        let expected = 200 * result.statistics.elapsed.inSeconds
        let sent = Int(result.statistics.sent)
        // A starved machine delays the sender, never speeds it up.
        #expect(
            Double(sent) <= expected * 1.25 + 8 && Double(sent) >= expected * 0.25,
            "sent \(sent), expected about \(Int(expected))")
        #expect(result.received >= sent && result.received <= sent + 4, "received \(result.received) of \(sent)")
        #expect(result.gaps == 0)
        // The last sequence of each device, as the consumer saw it, is what the statistics report.
        #expect(result.statistics.lastSequences == (0..<4).map { result.last[UInt32($0)] ?? 0 })
        // Timestamps are nanoseconds since the epoch: latency is positive and below ten seconds even on a starved machine.
        #expect(result.latencyP50 >= 0 && result.latencyP50 < 10_000, "p50 latency \(result.latencyP50) ms")
    }

    /// `loadSendTimes` gives the send time of every value a device sent (the fault campaign judges a
    /// lost reading by it): the same stamp the value carried, for sequences 1 to the last.
    @Test func theSendTimeOfEveryValueIsKept() async throws {
        let result = try await Self.measure(devices: 3, rate: 100, seconds: 0.5)
        for device in 0..<3 {
            let kept = result.sendTimes[device]
            let last = result.statistics.lastSequences[device]
            #expect(last > 0 && kept.first == 1 && UInt64(kept.nanoseconds.count) == last, "device \(device)")
            let received = result.stamps[UInt32(device)] ?? [:]
            #expect(received.count == Int(last), "device \(device): received \(received.count) of \(last)")
            for (sequence, stamp) in received where sequence >= kept.first {
                #expect(kept.nanoseconds[Int(sequence - kept.first)] == stamp, "device \(device) sequence \(sequence)")
            }
        }
    }

    /// A bluetoothd restart ends every link, not load mode: once the client has connected and
    /// subscribed again, the device sends again, its sequence continuing (found by the fault
    /// campaign: the sending task ended with the restart, so nothing was sent afterwards).
    @Test func loadModeSurvivesABluetoothdRestart() async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = try Self.simulator()
        defer { Task { await bus.stop() } }
        try await simulator.start(busAddress: bus.address)
        try await simulator.setLoad(devices: 1, rate: 100)
        let client = try await DBusConnection(address: bus.address)
        defer { client.close() }
        let device = "/org/bluez/hci0/dev_C0_FF_EE_10_00_00"
        func call(_ path: String, _ interface: String, _ method: String) async throws {
            _ = try await client.call(
                destination: "org.bluez", path: try DBusObjectPath(path), interface: interface, method: method)
        }
        func subscribe() async throws {
            #expect(
                await waitUntil {
                    (try? await simulator.snapshot(address: "C0:FF:EE:10:00:00").present) == true
                })
            try await call(device, "org.bluez.Device1", "Connect")
            #expect(
                await waitUntil {
                    (try? await simulator.snapshot(address: "C0:FF:EE:10:00:00").servicesResolved) == true
                })
            try await call(device + "/service000c/char000d", "org.bluez.GattCharacteristic1", "StartNotify")
        }
        func lastSequence() async -> UInt64 { await simulator.loadStatistics().lastSequences.first ?? 0 }
        try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        try await subscribe()
        #expect(await waitUntil { await lastSequence() > 0 })
        try await simulator.restartBluez(downtime: .milliseconds(100))
        let before = await lastSequence()
        try await subscribe()
        #expect(await waitUntil { await lastSequence() > before }, "no value sent after the restart (last \(before))")
        await simulator.stop()
    }

    /// A value no client socket took is not numbered: the sequences count what BlueZ handed to a
    /// client, so a consumer's "last sequence minus received" is what it lost. Here device 0's client
    /// shuts its socket for reading (every send then fails with EPIPE and nothing tells the simulator;
    /// a killed gateway's socket looks the same until the simulator notices the hang-up, up to
    /// 2.9 s in the fault campaign, whose `sigkill-10000-queued` counted those values as lost).
    /// Device 1 keeps streaming as the clock of the test.
    @Test func aValueNoSocketTookIsNotNumbered() async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = try Self.simulator()
        defer { Task { await bus.stop() } }
        try await simulator.start(busAddress: bus.address)
        try await simulator.setLoad(devices: 2, rate: 500)
        let client = try await DBusConnection(address: bus.address)
        defer { client.close() }
        func call(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
            -> [DBusValue]
        {
            try await client.call(
                destination: "org.bluez", path: try DBusObjectPath(path), interface: interface, method: method,
                arguments: arguments)
        }
        func sequence(_ index: Int) async -> UInt64 {
            let sequences = await simulator.loadStatistics().lastSequences
            return sequences.indices.contains(index) ? sequences[index] : 0
        }
        _ = try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        var descriptors: [Int32] = []
        defer { for fd in descriptors { close(fd) } }
        for index in 0..<2 {
            let address = "C0:FF:EE:10:00:0\(index)"
            let device = "/org/bluez/hci0/dev_C0_FF_EE_10_00_0\(index)"
            #expect(await waitUntil { (try? await simulator.snapshot(address: address).present) == true })
            _ = try await call(device, "org.bluez.Device1", "Connect")
            #expect(await waitUntil { (try? await simulator.snapshot(address: address).servicesResolved) == true })
            let reply = try await call(
                device + "/service000c/char000d", "org.bluez.GattCharacteristic1", "AcquireNotify", [.properties([:])])
            descriptors.append(try #require(reply.first?.asFileDescriptor).duplicate())
        }
        #expect(await waitUntil { await sequence(0) > 0 })
        shutdown(descriptors[0], Int32(SHUT_RD))
        let stopped = await sequence(0)
        let other = await sequence(1)
        // Device 1 sends 200 more values (about 0.4 s), device 0 tries as many: none is numbered.
        #expect(await waitUntil { await sequence(1) >= other + 200 })
        #expect(await sequence(0) == stopped, "values numbered after the socket refused them")
        await simulator.stop()
    }

    /// A value dropped at a full notify socket is numbered and recorded as dropped, as bluetoothd
    /// drops it: a consumer that read every value its socket held then has, with the drops, every
    /// sequence from 1 to the last. (Before, a full socket counted as "taken" with no record, so a
    /// gateway starved of CPU under load seemed to lose 400–1,800 values a device mid-stream in
    /// `ShutdownDrainTests`, values it never had.) The client here does not read until values were
    /// dropped, then stops the load and reads what the socket holds.
    @Test func aValueDroppedAtAFullSocketIsNumberedAndRecorded() async throws {
        let bus = try await DBusDaemonFixture()
        let simulator = try Self.simulator()
        defer { Task { await bus.stop() } }
        try await simulator.start(busAddress: bus.address)
        try await simulator.setLoad(devices: 1, rate: 1000)
        let client = try await DBusConnection(address: bus.address)
        defer { client.close() }
        func call(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = []) async throws
            -> [DBusValue]
        {
            try await client.call(
                destination: "org.bluez", path: try DBusObjectPath(path), interface: interface, method: method,
                arguments: arguments)
        }
        _ = try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
        let address = "C0:FF:EE:10:00:00"
        let device = "/org/bluez/hci0/dev_C0_FF_EE_10_00_00"
        #expect(await waitUntil { (try? await simulator.snapshot(address: address).present) == true })
        _ = try await call(device, "org.bluez.Device1", "Connect")
        #expect(await waitUntil { (try? await simulator.snapshot(address: address).servicesResolved) == true })
        let reply = try await call(
            device + "/service000c/char000d", "org.bluez.GattCharacteristic1", "AcquireNotify", [.properties([:])])
        let fd = try #require(reply.first?.asFileDescriptor).duplicate()
        defer { close(fd) }
        #expect(await waitUntil { (await simulator.loadStatistics().droppedAtFullSocket.first ?? 0) >= 100 })
        try await simulator.setLoad(devices: 0, rate: 0)  // stops sending; the statistics and drops stay
        let statistics = await simulator.loadStatistics()
        let last = try #require(statistics.lastSequences.first)
        var received: [UInt64] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0, let value = LoadValue(bytes: Array(buffer[0..<count])) else { break }
            received.append(value.sequence)
        }
        let dropped = await simulator.loadDroppedSequences(device: 0).flatMap { Array($0) }
        #expect(UInt64(dropped.count) == statistics.droppedAtFullSocket.first)
        #expect(!received.isEmpty && !dropped.isEmpty, "received \(received.count), dropped \(dropped.count)")
        #expect(Set(received).isDisjoint(with: dropped))
        let accounted = Set(received).union(dropped)
        let missing = (1...last).filter { !accounted.contains($0) }
        #expect(
            missing.isEmpty && accounted.count == Int(last),
            "last \(last), received \(received.count), dropped \(dropped.count), neither \(missing.count): \(missing.prefix(10))…"
        )
        await simulator.stop()
    }

    /// A benchmark, not a timed bar (it saturates the CPU for two seconds, so it runs only when
    /// asked: `BLEBRIDGE_BENCH=1 swift test --filter LoadModeTests/maximumRate`): reports the
    /// simulator's maximum notification rate on this machine, received by a plain D-Bus client.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["BLEBRIDGE_BENCH"] == "1"))
    func maximumRate() async throws {
        let result = try await Self.measure(devices: 20, rate: 5000, seconds: 2)
        print(
            "load mode: requested 100000/s (20 devices × 5000 Hz), sent \(Int(result.statistics.achievedRate)) notifications/s, received \(result.received) in \(result.statistics.elapsed), p50 latency \(String(format: "%.2f", result.latencyP50)) ms"
        )
        #expect(result.statistics.achievedRate > 1000, "load mode must outpace a real radio (~2,000/s)")
    }
}
