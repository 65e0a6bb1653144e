import BlueZ
import BlueZSimulator
import Dispatch
import EventLoop
import MQTT
import Synchronization
import TestSupport
import Testing

@testable import Gateway

/// Holds the notify thread of a gateway running in the test process (its `NotifySocketPoller`, which
/// reads its AcquireNotify sockets) until ``release()``, while the simulated
/// load devices keep sending into their sockets; then checks that every value the sockets took
/// reached the broker. `PowerOffDrainTests` and `DisconnectDrainTests` drop links while it is held.
final class NotifyThreadHold: Sendable {
    private let gate = DispatchSemaphore(value: 0)
    /// Set by the notify thread once it is held.
    private final class Started: Sendable {
        let value = Atomic<Bool>(false)
    }
    private let released = Atomic<Bool>(false)
    /// Each load device's last sequence number when the thread was held.
    let atHold: [UInt64]

    /// Holds `world`'s gateway's notify thread, then waits until each of the first `devices` load
    /// devices sent 2 more values.
    init(of world: InProcessLoadWorld, devices: Int) async throws {
        let simulator = world.simulator
        let loop = try #require(await world.gateway.notifyPoller?.loop, "the gateway has no notify thread")
        let (gate, started) = (self.gate, Started())
        #expect(
            loop.execute {
                started.value.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
            })
        #expect(await waitUntil { started.value.load(ordering: .sequentiallyConsistent) })
        let atHold = await simulator.loadStatistics().lastSequences
        self.atHold = atHold
        let sentWhileHeld = await waitUntil {
            let now = await simulator.loadStatistics().lastSequences
            return (0..<devices).allSatisfy { now[$0] >= atHold[$0] + 2 }
        }
        #expect(sentWhileHeld, "the devices sent nothing while the notify thread was held")
    }

    /// Lets the thread go (once).
    func release() {
        if !released.exchange(true, ordering: .sequentiallyConsistent) { gate.signal() }
    }

    deinit { release() }

    /// Records an issue for each of the first `devices` load devices that lost a value numbered up
    /// to `sent` (the simulator's last sequences when the links went down): every value a socket
    /// took must reach the broker within 20 s, except those the simulator dropped at a full socket.
    /// `rawTopic` (the devices stream through raw `gatt/notify` requests): only the load devices'
    /// raw topics count, and a value published there twice is an issue too.
    func expectNothingLost(
        devices: Int, sent: [UInt64], simulator: BlueZSimulator, recorder: MQTTRecorder, rawTopic: Bool = false
    ) async {
        var dropped: [Int: Set<UInt64>] = [:]
        for device in 0..<devices {
            dropped[device] = Set(await simulator.loadDroppedSequences(device: device).flatMap { Array($0) })
        }
        let rawTopics = Set((0..<devices).map(InProcessLoadWorld.rawTopic))
        // By device, how often each value was published; the messages are parsed once each (parsing
        // every message at every poll took minutes once a run had lost values and waited its 20 s).
        var published: [Int: [UInt64: Int]] = [:]
        var parsed = 0
        func parse(_ messages: [MQTTMessage]) {
            for message in messages[min(parsed, messages.count)...] where !rawTopic || rawTopics.contains(message.topic)
            {
                for (device, sequences) in ShutdownDrainTests.sequences([(message.topic, message.payload)]) {
                    for sequence in sequences { published[device, default: [:]][sequence, default: 0] += 1 }
                }
            }
            parsed = messages.count
        }
        func missing(_ device: Int) -> [UInt64] {
            (1...max(sent[device], 1)).filter {
                published[device]?[$0] == nil && !(dropped[device]?.contains($0) ?? false)
            }
        }
        let complete = await recorder.wait(timeout: .seconds(20)) { messages in
            parse(messages)
            return (0..<devices).allSatisfy { missing($0).isEmpty }
        }
        parse(recorder.all)
        for device in 0..<devices {
            let lost = missing(device)
            #expect(
                lost.isEmpty,
                "device \(device): \(lost.count) of \(sent[device]) values lost: \(lost.prefix(20)); sent while the notify thread was held: \(atHold[device] + 1)…\(sent[device]); dropped at a full socket \(dropped[device]?.count ?? 0); complete: \(complete)"
            )
            // Each raw message carries one value (a state merges a value into the device's fields).
            guard rawTopic else { continue }
            let twice = (published[device] ?? [:]).filter { $0.value > 1 }.keys.sorted()
            #expect(
                twice.isEmpty, "device \(device): \(twice.count) values published more than once: \(twice.prefix(20))")
        }
    }
}
