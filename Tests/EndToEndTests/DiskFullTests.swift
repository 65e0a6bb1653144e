import Foundation
import TestSupport
import Testing

/// Issue 19, D1, the bar, against the real gateway: the outbox on an 8 MB tmpfs filled to
/// `disk_full` while the broker is away; 2 MB freed, the broker back: every reading offered after
/// space was freed is delivered, and none is dropped (`dropped` in `bridge/health`). Then, full again with the broker away, SIGTERM exits within 10 s.
/// Needs root to mount the tmpfs; skipped (saying why) where that is impossible.
@Suite(
    .serialized,
    .enabled(if: TmpfsFixture.mountError == nil, TmpfsFixture.skipReason))
struct DiskFullTests {
    /// Fills the tmpfs until about `leave` bytes are free, in files of at most 2 MB named `prefix-N`.
    static func fill(_ disk: TmpfsFixture, leaving leave: Int, prefix: String) throws {
        var index = 0
        while disk.freeBytes - leave > 0 {
            try disk.fill("\(prefix)-\(index)", bytes: min(2_000_000, disk.freeBytes - leave))
            index += 1
        }
    }

    /// Heart-rate notifications as fast as the simulator sends them, `step` at a time, until the
    /// gateway logs that the outbox refuses readings for a full disk (after `offset` characters of
    /// its log); at most `budget` in all. Returns how many were sent, nil if the disk never got full.
    static func burstUntilDiskFull(
        _ world: SimulatedWorld, after offset: Int, step: Int = 2_000, budget: Int = 60_000
    ) async throws -> Int? {
        var sent = 0
        while true {
            if String(world.gateway.log.dropFirst(offset)).contains("outbox refused readings code=diskFull") {
                return sent
            }
            guard sent + step <= budget else { return nil }
            try await world.simulator.burst(address: SimulatedWorld.strap, uuid: "2a37", count: step)
            sent += step
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The gateway's memory hold for readings the outbox refuses (`PublisherOptions.heldLimit`):
    /// beyond it the oldest are dropped.
    static let heldLimit = 10_000

    /// The `dropped` figures of the `bridge/health` messages recorded so far.
    static func droppedCounts(_ world: SimulatedWorld) -> [Int] {
        world.recorder.on("blebridge/bridge/health").compactMap { world.recorder.json($0)?["dropped"] as? Int }
    }

    @Test(.timeLimit(.minutes(5))) func readingsOfferedAfterSpaceIsFreedAreDeliveredAndSIGTERMIsPrompt() async throws {
        let disk = try TmpfsFixture(bytes: 8 * 1_048_576)
        let world = try await SimulatedWorld(healthInterval: "1s", outboxDirectory: disk.path)
        #expect(try await FaultTests.resumes(world, 1690), "log: \(world.gateway.log.suffix(3000))")
        await world.broker.stop()
        try disk.fill("filler-2mb", bytes: 2 * 1_048_576)
        try Self.fill(disk, leaving: 262_144, prefix: "rest")
        // From the fill on, at most the memory hold's 10,000 readings, whatever the gateway's lag:
        // those it cannot store are held, none dropped, so every `dropped` below must read 0.
        let toFull = try await Self.burstUntilDiskFull(world, after: 0, step: 1_000, budget: Self.heldLimit)
        #expect(toFull != nil, "never disk_full; log: \(world.gateway.log.suffix(3000))")
        // …and up to 8,000 more while it is full: held in memory, more than the 2 MB about to be freed.
        let more = min(8_000, Self.heldLimit - (toFull ?? Self.heldLimit))
        for _ in 0..<(more / 1_000) {
            try await world.simulator.burst(address: SimulatedWorld.strap, uuid: "2a37", count: 1_000)
            try await Task.sleep(for: .milliseconds(125))
        }
        print("disk-full gateway: \(toFull.map(String.init) ?? "-") readings to disk_full, \(more) more while full")

        // 2 MB freed: from here on nothing may be lost.
        try FileManager.default.removeItem(at: disk.directory.file("filler-2mb"))
        let sent = try await FaultTests.beats(world, from: 1800, count: 20, every: .milliseconds(250))
        try await world.broker.start()
        let recorder = world.recorder
        let delivered = await recorder.wait(timeout: .seconds(120)) { messages in
            let rates = messages.compactMap { recorder.json($0)?["heart_rate"] as? Int }
            return Set(sent).isSubset(of: Set(rates))
        }
        let rates = Set(world.recorder.all.compactMap { world.recorder.json($0)?["heart_rate"] as? Int })
        #expect(
            delivered, "missing \(Set(sent).subtracting(rates).sorted()); log: \(world.gateway.log.suffix(3000))")
        let failures = world.gateway.log.split(separator: "\n").filter { $0.contains("ERROR") }
        #expect(failures.count < 20, "\(failures.count) error lines: \(failures.prefix(20))")
        // Nothing dropped: every `bridge/health` since the broker's return, up to one published
        // after the last marker was delivered, counts 0 readings dropped.
        let healthSoFar = world.recorder.on("blebridge/bridge/health").count
        #expect(
            await world.recorder.wait(timeout: .seconds(10)) {
                $0.lazy.filter { $0.topic == "blebridge/bridge/health" }.count > healthSoFar
            }, "no bridge/health after the delivery")
        let dropped = Self.droppedCounts(world)
        #expect(!dropped.isEmpty && dropped.allSatisfy { $0 == 0 }, "dropped in bridge/health: \(dropped)")

        // Full again with the broker away: SIGTERM still exits promptly.
        await world.broker.stop()
        let offset = world.gateway.log.count
        try Self.fill(disk, leaving: 16_384, prefix: "again")
        #expect(
            try await Self.burstUntilDiskFull(world, after: offset) != nil,
            "never disk_full again; log: \(world.gateway.log.suffix(3000))")
        let clock = ContinuousClock()
        let begin = clock.now
        world.gateway.process.signal(SIGTERM)
        let status = await world.gateway.process.waitForExit(timeout: .seconds(20))
        let took = clock.now - begin
        #expect(status == 0 && took < .seconds(10), "SIGTERM: status \(String(describing: status)) after \(took)")
        print("disk-full gateway: SIGTERM exit after \(took); \(failures.count) error lines")
        await world.shutdown()
    }
}
