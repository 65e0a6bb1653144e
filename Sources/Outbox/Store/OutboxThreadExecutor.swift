import Foundation
import Synchronization

/// A serial executor backed by one dedicated thread, so the outbox's SQLite calls (which may
/// wait on `fsync` or a file lock) never run on Swift's cooperative pool.
///
/// The thread exits when the executor is released.
final class OutboxThreadExecutor: SerialExecutor {
    /// Jobs handed over from any thread; `wakeUp` counts the signals the thread has to consume.
    private final class Queue: Sendable {
        let jobs = Mutex<(pending: [UnownedJob], stopped: Bool)>(([], false))
        let wakeUp = DispatchSemaphore(value: 0)
    }

    private let queue = Queue()

    init(name: String) {
        let queue = self.queue
        // Unowned: jobs exist only while their actor (which holds this executor) is alive.
        let executor = asUnownedSerialExecutor()
        let thread = Thread { [queue] in
            while true {
                queue.wakeUp.wait()
                let (jobs, stopped) = queue.jobs.withLock { state in
                    defer { state.pending.removeAll(keepingCapacity: true) }
                    return (state.pending, state.stopped)
                }
                for job in jobs { job.runSynchronously(on: executor) }
                if stopped && jobs.isEmpty { return }
            }
        }
        thread.name = name
        thread.start()
    }

    deinit {
        queue.jobs.withLock { $0.stopped = true }
        queue.wakeUp.signal()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.jobs.withLock { $0.pending.append(job) }
        queue.wakeUp.signal()
    }
}
