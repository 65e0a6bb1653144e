import Foundation
import Synchronization

/// A slow broker: a thread of its own stops the broker (SIGSTOP) and lets it run (SIGCONT) in
/// turn, `running` in every `period`. Slow, never frozen: under load a thread that sleeps through
/// the pause is woken late (1.36 s at load 14 on two cores, the broker frozen all that time), and
/// a broker let run for 5 ms was not put on a CPU at all in 27% of its windows at load 19 (0.96 s
/// in a row). So the thread asks for the real-time class (`SCHED_FIFO`, when this process may:
/// root or `RLIMIT_RTPRIO`), which wakes it on time whatever else runs, and keeps each window
/// open until the broker has been on a CPU in it (its `schedstat` count of timeslices moved).
/// It records what really happened: the longest pause and the longest time the broker did not run.
package final class BrokerDutyCycle: Sendable {
    /// What the cycle did, from the thread's own clock readings.
    package struct Figures: Sendable, CustomStringConvertible {
        package var cycles = 0
        /// SIGSTOP to SIGCONT, the longest.
        package var longestPause: Duration = .zero
        /// Between the ends of two windows the broker ran in, the longest: an upper bound of the
        /// freezes its clients saw.
        package var longestWithoutRunning: Duration = .zero
        /// Windows held open past `running` until the broker had run.
        package var extendedWindows = 0
        package var realTime = false
        /// Set by ``stop()``; the thread's own flag that it ended.
        fileprivate var stopping = false
        fileprivate var ended = false

        package var description: String {
            "\(cycles) cycles, longest pause \(longestPause), longest without running \(longestWithoutRunning), "
                + "\(extendedWindows) windows held open until the broker ran, "
                + (realTime ? "SCHED_FIFO" : "SCHED_OTHER (SCHED_FIFO refused)")
        }
    }

    private let state: Mutex<Figures>

    /// Starts the cycle on `broker` (stopped first).
    package init(_ broker: MosquittoFixture, running: Duration = .milliseconds(5), period: Duration = .milliseconds(50))
    {
        state = Mutex(Figures())
        let pid = broker.processIdentifier
        let pause = Self.microseconds(period - running)
        let window = Self.microseconds(running)
        let thread = Thread { [self] in
            var parameters = sched_param()
            parameters.sched_priority = 1
            let realTime = pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
            state.withLock { $0.realTime = realTime }
            let clock = ContinuousClock()
            var lastRan = clock.now
            while !state.withLock({ $0.stopping }) {
                let stopped = clock.now
                broker.pause()
                usleep(pause)
                broker.resume()
                let resumed = clock.now
                let before = Self.timeslices(pid)
                usleep(window)
                var extended = false
                // Pacing, not synchronisation: the window lasts until the broker has had a CPU.
                while before >= 0, Self.timeslices(pid) == before, !state.withLock({ $0.stopping }) {
                    extended = true
                    usleep(1_000)
                }
                let ran = clock.now
                state.withLock {
                    $0.cycles += 1
                    $0.longestPause = max($0.longestPause, resumed - stopped)
                    $0.longestWithoutRunning = max($0.longestWithoutRunning, ran - lastRan)
                    if extended { $0.extendedWindows += 1 }
                }
                lastRan = ran
            }
            broker.resume()
            state.withLock { $0.ended = true }
        }
        thread.start()
    }

    /// Stops the cycle and leaves the broker running; returns what it did.
    package func stop() async -> Figures {
        state.withLock { $0.stopping = true }
        _ = await waitUntil(timeout: .seconds(5)) { self.state.withLock { $0.ended } }
        return state.withLock { $0 }
    }

    private static func microseconds(_ duration: Duration) -> useconds_t {
        useconds_t(duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000)
    }

    /// How many times the process has been put on a CPU (`/proc/<pid>/schedstat`, third figure);
    /// -1 when unreadable (the window then ends after `running`).
    private static func timeslices(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
            let field = text.split(separator: " ").dropFirst(2).first,
            let count = Int(field.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return -1 }
        return count
    }
}
