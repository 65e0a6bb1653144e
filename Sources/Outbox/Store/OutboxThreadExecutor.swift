import Foundation
import Logging
import Synchronization
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// A serial executor backed by one dedicated thread, so the outbox's SQLite calls (which may
/// wait on `fsync` or a file lock) never run on Swift's cooperative pool.
///
/// Besides Swift jobs (the store's actor and anything sharing its executor) it runs plain closures,
/// at once or after a delay, in the same FIFO order: the publisher drives its window from other
/// threads' callbacks this way without a detour through the cooperative pool.
///
/// The thread exits when the executor is released.
final class OutboxThreadExecutor: SerialExecutor {
    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Timed {
        let deadline: ContinuousClock.Instant
        let body: @Sendable () -> Void
    }

    private struct State {
        var pending: [Work] = []
        var timed: [Timed] = []
        var stopped = false
        var thread: pthread_t?
        /// The timer deadline the thread is waiting for (nil while it runs work or waits for work only).
        var sleepingUntil: ContinuousClock.Instant?
    }

    /// Work handed over from any thread; `wakeUp` counts the signals the thread has to consume.
    private final class Queue: Sendable {
        let state = Mutex(State())
        let wakeUp = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()

    init(name: String) {
        let queue = self.queue
        // Unowned: jobs exist only while their actor (which holds this executor) is alive.
        let executor = asUnownedSerialExecutor()
        let thread = Thread { [queue] in
            ThreadName.setCurrent(name)
            queue.state.withLock { $0.thread = pthread_self() }
            let clock = ContinuousClock()
            while true {
                let deadline = queue.state.withLock { state in
                    state.sleepingUntil = state.timed.first?.deadline
                    return state.sleepingUntil
                }
                if let deadline {
                    let wait = clock.now.duration(to: deadline)
                    if wait > .zero {
                        let nanoseconds = Int(wait.inNanoseconds)
                        _ = queue.wakeUp.wait(timeout: .now() + .nanoseconds(max(1, nanoseconds)))
                    }
                } else {
                    queue.wakeUp.wait()
                }
                let now = clock.now
                let (work, due, stopped) = queue.state.withLock { state in
                    defer { state.pending.removeAll(keepingCapacity: true) }
                    state.sleepingUntil = nil
                    let dueCount = state.timed.prefix { $0.deadline <= now }.count
                    let due = state.timed.prefix(dueCount).map(\.body)
                    state.timed.removeFirst(dueCount)
                    return (state.pending, due, state.stopped)
                }
                for item in work {
                    switch item {
                    case .job(let job): job.runSynchronously(on: executor)
                    case .closure(let body): body()
                    }
                }
                for body in due { body() }
                if stopped && work.isEmpty { return }
            }
        }
        thread.start()
    }

    deinit {
        queue.state.withLock { $0.stopped = true }
        queue.wakeUp.signal()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.state.withLock { $0.pending.append(.job(job)) }
        queue.wakeUp.signal()
    }

    /// Runs `body` on the thread after the work already queued.
    func execute(_ body: @escaping @Sendable () -> Void) {
        queue.state.withLock { $0.pending.append(.closure(body)) }
        queue.wakeUp.signal()
    }

    /// Runs `body` on the thread once `delay` has passed (timers with the same deadline in the order set).
    func execute(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        execute(at: ContinuousClock.now + delay, body)
    }

    /// Runs `body` on the thread once `deadline` has come (timers with the same deadline in the order set).
    func execute(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) {
        queue.state.withLock { state in
            let timer = Timed(deadline: deadline, body: body)
            let index = state.timed.firstIndex { $0.deadline > deadline } ?? state.timed.count
            state.timed.insert(timer, at: index)
        }
        queue.wakeUp.signal()
    }

    /// The timer deadline the thread has gone to wait for, if it waits for one (tests wait for this
    /// instead of guessing when the thread got there).
    var sleepingUntil: ContinuousClock.Instant? { queue.state.withLock { $0.sleepingUntil } }

    /// True on this executor's thread (a closure from ``execute(_:)`` or a job).
    var isCurrentThread: Bool {
        guard let thread = queue.state.withLock({ $0.thread }) else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Lets `assumeIsolated` accept closures run by ``execute(_:)``: they run on the thread, where
    /// only this executor's work ever runs, one item at a time.
    func checkIsolated() {
        precondition(isCurrentThread, "expected to run on the outbox thread")
    }
}
