internal import CTaskPool

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Swift's global concurrent executor on a fixed set of threads of the gateway's own.
///
/// On Linux the runtime's default global executor is libdispatch's default-priority root queue,
/// whose pool grows: once a second libdispatch looks at its workers in `/proc`, and when work is
/// queued while fewer than one per core are runnable and none waits idle, it starts another (up
/// to twice the cores while one runs, more when none does), and keeps it while work comes at
/// least every 5 s. A worker that only waits a few milliseconds for a lock (the Swift runtime's
/// task-status lock, malloc's, a `Mutex`) at that second's look is enough, and under CPU
/// contention such waits are common, so the gateway's thread count stepped up after a burst of
/// work (docs/testing.md, "The ninth thread"). `install(threads:)` points the runtime's hooks
/// for ready jobs, `Task.sleep` and `Clock.sleep` at a queue served by `threads` workers
/// (`blebridge.pool`) and one timer thread (`blebridge.timer`): the count never changes.
///
/// The price is libdispatch's escape hatch: a job that blocks its thread holds one of a fixed
/// few. The gateway already never blocks the cooperative pool (docs/architecture.md: blocking C
/// calls run on dedicated threads), and every wait on the pool is a short lock.
package enum TaskPool {
    /// The workers' thread name (`/proc/<pid>/task/<tid>/comm`).
    package static let threadName = "blebridge.pool"
    /// The timer thread's name.
    package static let timerThreadName = "blebridge.timer"

    /// One worker per online core, at least two (libdispatch's pool starts at one per core too).
    package static var defaultThreadCount: Int {
        max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Starts the threads and installs the hooks; call it once, first thing in `main`, before any
    /// task is enqueued on the global executor (one enqueued before runs on libdispatch). False
    /// when no thread could be started: the runtime's own executor stays.
    @discardableResult
    package static func install(threads: Int = defaultThreadCount) -> Bool {
        blebridge_task_pool_install(Int32(clamping: threads)) == 0
    }

    /// True once ``install(threads:)`` succeeded.
    package static var isInstalled: Bool { blebridge_task_pool_installed() != 0 }

    /// Suspends the task until `deadline`, on the pool's timer thread; throws `CancellationError`
    /// when the task is cancelled first. Swift 6.2 and later schedule `Clock.sleep` and
    /// `Task.sleep` on their own global executor's timer (libdispatch), past the runtime's hooks:
    /// the gateway's clock (`SystemClock`) sleeps here when the pool is installed, else on
    /// `ContinuousClock`.
    package static func sleep(until deadline: ContinuousClock.Instant) async throws {
        guard isInstalled else { return try await ContinuousClock().sleep(until: deadline, tolerance: nil) }
        let left = ContinuousClock.now.duration(to: deadline)
        let (seconds, attoseconds) = left.components
        let nanoseconds: UInt64
        if seconds < 0 {
            nanoseconds = 0
        } else if seconds >= 9_000_000_000 {
            nanoseconds = .max  // ~285 years: never
        } else {
            nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }
        try await TaskPoolSleeper.sleep(nanoseconds: nanoseconds)
    }

    /// Jobs the pool's workers ran since the install.
    package static var jobsRun: UInt64 { UInt64(blebridge_task_pool_jobs_run()) }

    /// Timed jobs (`Task.sleep`, `Clock.sleep`) the timer thread queued at their deadline since
    /// the install.
    package static var timersFired: UInt64 { UInt64(blebridge_task_pool_timers_fired()) }
}
