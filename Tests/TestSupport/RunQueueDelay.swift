import Foundation
import Timekeeping

/// How long processes waited for a CPU while runnable, to tell a starved machine from a slow system
/// under test.
///
/// Linux reports per thread, in `/proc/<pid>/task/<tid>/schedstat`, the nanoseconds the thread
/// spent on a run queue waiting to run (second field). `RunQueueDelay` sums that over each
/// process's threads when created and again in ``starvation()``.
///
/// ```swift
/// let delay = RunQueueDelay(processes: [getpid(), gateway.process.processIdentifier])
/// await sleepRunnable(for: .seconds(2))
/// if delay.starvation() >= 0.25 { … }   // some process waited ≥ 25 % of the window for a CPU
/// ```
package struct RunQueueDelay: Sendable {
    package let processes: [Int32]
    private let start: ContinuousClock.Instant
    private let initial: [Int32: Int64]

    package init(processes: [Int32]) {
        self.processes = processes
        start = .now
        var initial: [Int32: Int64] = [:]
        for pid in processes { initial[pid] = Self.waited(pid) }
        self.initial = initial
    }

    /// The largest share of the time since `init` that one of the processes' threads together
    /// spent waiting for a CPU (0 when not reported; may exceed 1 with several threads waiting).
    package func starvation() -> Double {
        let seconds = (ContinuousClock.now - start).inSeconds
        guard seconds > 0 else { return 0 }
        var worst = 0.0
        for pid in processes {
            guard let before = initial[pid], let now = Self.waited(pid) else { continue }
            // A thread that exited in between takes its share with it: never count below zero.
            worst = max(worst, Double(max(0, now - before)) / 1e9 / seconds)
        }
        return worst
    }

    /// Nanoseconds `pid`'s live threads have waited on a run queue; nil when not reported.
    static func waited(_ pid: Int32) -> Int64? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
            return nil
        }
        var total: Int64 = 0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8)
            else { continue }
            let fields = text.split(separator: " ")
            if fields.count >= 2, let waited = Int64(fields[1]) { total += waited }
        }
        return total
    }
}
