import BlueZ
import BlueZSimulator
import Dispatch
import EventLoop
import Synchronization
import TestSupport
import Testing

/// Holds the notify thread of this process (`NotifySocketPoller.shared`: a gateway running in the
/// test process reads its AcquireNotify sockets there) until ``release()``, while the simulated
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

    /// Holds the thread, then waits until each of the first `devices` load devices sent 2 more values.
    init(devices: Int, simulator: BlueZSimulator) async throws {
        let loop = try #require(NotifySocketPoller.shared.loop)
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
    func expectNothingLost(devices: Int, sent: [UInt64], simulator: BlueZSimulator, recorder: MQTTRecorder) async {
        var dropped: [Int: Set<UInt64>] = [:]
        for device in 0..<devices {
            dropped[device] = Set(await simulator.loadDroppedSequences(device: device).flatMap { Array($0) })
        }
        func missing(_ device: Int, in received: [Int: Set<UInt64>]) -> [UInt64] {
            (1...max(sent[device], 1)).filter {
                !(received[device]?.contains($0) ?? false) && !(dropped[device]?.contains($0) ?? false)
            }
        }
        let complete = await recorder.wait(timeout: .seconds(20)) { messages in
            let received = ShutdownDrainTests.sequences(messages.map { ($0.topic, $0.payload) })
            return (0..<devices).allSatisfy { missing($0, in: received).isEmpty }
        }
        let received = ShutdownDrainTests.sequences(recorder.all.map { ($0.topic, $0.payload) })
        for device in 0..<devices {
            let lost = missing(device, in: received)
            #expect(
                lost.isEmpty,
                "device \(device): \(lost.count) of \(sent[device]) values lost: \(lost.prefix(20)); sent while the notify thread was held: \(atHold[device] + 1)…\(sent[device]); dropped at a full socket \(dropped[device]?.count ?? 0); complete: \(complete)"
            )
        }
    }
}
