import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Issue 17's memory bar, measured: the demo world plus 30,000 advertisers with random private
/// addresses passing by (200 a second, each for 2 s), against the real blebridge binary. The
/// gateway's RSS after 30,000 must be within 10% of its RSS after 100, and a minute after they
/// are all gone fall back to within 3% of it. A benchmark (about 4 minutes):
/// `BLEBRIDGE_BENCH=1 swift test --filter PassingMemoryBenchmarkTests`; the figures are printed
/// with the load average and the RSS split into `RssAnon` (memory the gateway allocated: heap,
/// stacks) and `RssFile` (pages of the mapped binary and libraries, 34 of 43 MB in a debug
/// build), so a rise can be told apart.
@Suite(.serialized) struct PassingMemoryBenchmarkTests {
    /// The resident memory of `pid` in kB: `VmRSS`, `RssAnon` and `RssFile` of /proc/PID/status
    /// (0 where a line is missing).
    struct Resident: CustomStringConvertible {
        var total = 0
        var anonymous = 0
        var file = 0

        init(_ pid: Int32) {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return }
            for line in status.split(separator: "\n") {
                let words = line.split(separator: " ", omittingEmptySubsequences: true)
                guard words.count >= 2, let kilobytes = Int(words[1]) else { continue }
                switch words[0] {
                case "VmRSS:": total = kilobytes
                case "RssAnon:": anonymous = kilobytes
                case "RssFile:": file = kilobytes
                default: break
                }
            }
        }

        var description: String { "\(total) kB (anonymous \(anonymous) kB, files \(file) kB)" }
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["BLEBRIDGE_BENCH"] == "1"))
    func residentMemoryStaysFlatWithThirtyThousandPassingAddresses() async throws {
        let world = try await SimulatedWorld(passing: Self.passing())
        let seen = try await Self.measure(world, "passing-memory") {
            await world.recorder.first(on: "blebridge/bthome") { _ in true } != nil
        }
        #expect(seen, "the demo's BTHome sensor was published meanwhile")
        await world.shutdown()
    }

    /// The same with the `discovery` scenario and `auto_devices` on, no `devices` configured: the
    /// 30 sensors become automatic devices (with Home Assistant discovery) while 30,000 phones
    /// walk by, none of which may become one or keep memory.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["BLEBRIDGE_BENCH"] == "1"))
    func residentMemoryStaysFlatWhileDiscoveringWithThirtyThousandPassingAddresses() async throws {
        let ids = try DiscoveryScenarioTests.expectedIDs()
        let world = try await SimulatedWorld(
            scenario: "discovery", passing: Self.passing(start: .seconds(30)), edit: DiscoveryScenarioTests.edit)
        let all = try await Self.measure(world, "discovery-memory") {
            ids.values.allSatisfy { !world.states($0).isEmpty }
        }
        #expect(all, "every sensor published: \(ids.values.filter { world.states($0).isEmpty }.sorted())")
        let added = world.gateway.log.components(separatedBy: "automatic device added id=").count - 1
        #expect(added == ids.count, "only the sensors became devices: \(added)")
        await world.shutdown()
    }

    /// 200 a second, 2 s each, from `start` on: late enough for the world's own devices to be
    /// announced and publishing (the 30 sensors of `discovery` take longer than the demo's five),
    /// so the first sample measures the gateway at work, not still filling up.
    static func passing(start: Duration = .seconds(10)) -> ScenarioPassing {
        let total = Int(ProcessInfo.processInfo.environment["BLEBRIDGE_PASSING_TOTAL"] ?? "") ?? 30_000
        return ScenarioPassing(rate: 200, total: total, lifetime: .seconds(2), start: start)
    }

    /// Samples the gateway's memory after 100, 1,000, 10,000 and all passing devices are gone and
    /// 75 s after the last, prints them under `label` with the load average, and checks the bars
    /// on `VmRSS`; returns `published()` as it is at the end.
    static func measure(
        _ world: SimulatedWorld, _ label: String, published: () async -> Bool
    ) async throws -> Bool {
        let total = passing().total
        let pid = world.gateway.process.processIdentifier
        let loadBefore = Self.loadAverage()
        var samples: [(String, Resident)] = []
        for mark in [100, 1_000, 10_000, total] where mark <= total {
            while await world.simulator.passingStatistics().gone < mark {
                try await Task.sleep(for: .milliseconds(100))
            }
            samples.append(("after \(mark) gone", Resident(pid)))
        }
        // A minute and a bit later (the gateway keeps advertisers for 65 s).
        try await Task.sleep(for: .seconds(75))
        samples.append(("75 s after the last", Resident(pid)))
        let report = samples.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
        print("\(label) (load \(loadBefore) → \(Self.loadAverage())): \(report)")
        let baseline = Double(samples[0].1.total)
        #expect(baseline > 0, "VmRSS read: \(report)")
        #expect(Double(samples[samples.count - 2].1.total) <= baseline * 1.10, "\(report)")
        #expect(Double(samples[samples.count - 1].1.total) <= baseline * 1.10, "\(report)")
        // Falls back once they are gone: the advertisers table is rebuilt smaller and the freed
        // heap given back (malloc_trim, ProcessMemory).
        #expect(Double(samples[samples.count - 1].1.total) <= baseline * 1.03, "falls back: \(report)")
        #expect(world.gateway.process.isRunning)
        return await published()
    }

    /// The 1-minute load average (/proc/loadavg), for the printed figures.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return String(text.split(separator: " ").first ?? "?")
    }
}
