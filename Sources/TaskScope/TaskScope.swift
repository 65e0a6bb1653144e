import Synchronization
import Timekeeping

/// One task group that owns a component's tasks (issue 20): every loop, timer and job the
/// component starts is a child of it, so none outlives the component. ``close(until:)`` cancels
/// them all and returns once every one has ended, where a bag of unstructured `Task`s could
/// only be cancelled and left running.
///
/// The group lives in the scope's own task (made at `init`), or, for a scope made with
/// ``hostedByCaller()``, in the task that calls ``host()``: then the children are children of
/// that task's, and cancelling it cancels them. ``spawn(_:)`` hands work to the group through a
/// stream, because only the task that owns a group may add to it.
///
/// ```swift
/// let scope = TaskScope()
/// scope.spawn { for await event in events { await handle(event) } }
/// let timer = scope.spawnCancellable { if (try? await clock.sleep(for: .seconds(5))) != nil { await fire() } }
/// timer?.cancel()
/// await scope.close(until: .now + .seconds(2))
/// ```
package final class TaskScope: Sendable {
    private struct Job: Sendable {
        let work: @Sendable () async -> Void
    }

    private let jobs: AsyncStream<Job>.Continuation
    /// The scope's own task, which hosts the group; nil for a scope its caller hosts.
    private let root: Task<Void, Never>?
    /// The jobs a caller's ``host()`` takes (taken once: the first call hosts).
    private let hostedJobs: Mutex<AsyncStream<Job>?>
    private let ended = Signal()
    /// Fired by ``close(until:)`` (or a host's end): work dequeued after it starts cancelled.
    private let closing = Signal()

    /// A scope whose group runs in a task of its own, made now.
    package convenience init() { self.init(hostedByCaller: false) }

    /// A scope whose group runs in the task that calls ``host()``. Work spawned before waits for
    /// it: nothing runs until a task hosts the scope.
    package static func hostedByCaller() -> TaskScope { TaskScope(hostedByCaller: true) }

    private init(hostedByCaller: Bool) {
        let (stream, jobs) = AsyncStream.makeStream(of: Job.self)
        self.jobs = jobs
        if hostedByCaller {
            hostedJobs = Mutex(stream)
            root = nil
        } else {
            hostedJobs = Mutex(nil)
            root = Task { [ended, closing] in
                await Self.runGroup(stream, closing: closing)
                ended.fire()
            }
        }
    }

    /// Runs the group of a scope made with ``hostedByCaller()`` in the calling task, until
    /// ``close(until:)`` or the calling task's cancellation has ended every child; the children are
    /// the calling task's. Returns at once for any other scope, and for a second call.
    package func host() async {
        guard let stream = hostedJobs.withLock({ $0.take() }) else { return }
        await Self.runGroup(stream, closing: closing)
        // Also when the host was cancelled rather than the scope closed: spawn runs nothing more.
        closing.fire()
        jobs.finish()
        ended.fire()
    }

    private static func runGroup(_ stream: AsyncStream<Job>, closing: Signal) async {
        await withDiscardingTaskGroup { group in
            // Ends when the scope is closed or the hosting task is cancelled. Work still queued at the
            // close starts cancelled (a child added to a cancelled group is), as it does in a cancelled host.
            for await job in stream {
                if closing.isFired { group.cancelAll() }
                group.addTask(operation: job.work)
            }
            // The children are cancelled (a cancelled host's already are) and awaited by the group.
            group.cancelAll()
        }
    }

    /// Starts `work` as a child of the scope. Returns false, and runs nothing, once the scope is closed.
    @discardableResult
    package func spawn(_ work: @escaping @Sendable () async -> Void) -> Bool {
        if case .enqueued = jobs.yield(Job(work: work)) { return true }
        return false
    }

    /// Starts `work` as a child of the scope that can also be cancelled and awaited by itself;
    /// nil (nothing runs) once the scope is closed.
    package func spawnCancellable(_ work: @escaping @Sendable () async -> Void) -> ScopedTask? {
        let task = ScopedTask()
        return spawn { await task.run(work) } ? task : nil
    }

    /// Starts `work` as a child whose result can be awaited (``ScopedValue/value``); nil (nothing
    /// runs) once the scope is closed.
    package func spawnValue<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) -> ScopedValue<Value>? {
        let value = ScopedValue<Value>()
        return spawn { await value.run(work) } ? value : nil
    }

    /// A timer as a child: `fire` runs once `deadline` has passed on `clock`, unless the returned
    /// task is cancelled first (then `fire` never runs); nil (nothing runs) once the scope is closed.
    package func spawnTimer(
        at deadline: ContinuousClock.Instant, clock: any BridgeClock, _ fire: @escaping @Sendable () async -> Void
    ) -> ScopedTask? {
        spawnCancellable {
            // Real delay: the timer's deadline (each caller says what it waits for).
            do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
            await fire()
        }
    }

    /// False once ``close(until:)`` was called: ``spawn(_:)`` runs nothing more.
    package var isOpen: Bool { !closing.isFired }

    /// Whether ``close(until:)`` has returned with every child ended.
    package var isClosed: Bool { ended.isFired }

    /// Takes no more work, cancels every child and waits until all have returned or `deadline`
    /// passes. Returns whether all ended: a child that ignores cancellation (a call on a frozen
    /// peer) is left to end by itself after the deadline, so a stop stays bounded.
    @discardableResult
    package func close(until deadline: ContinuousClock.Instant, clock: any BridgeClock = SystemClock()) async -> Bool {
        closing.fire()
        jobs.finish()
        root?.cancel()
        // A scope nobody hosted yet is hosted here, briefly: the work queued in it runs, cancelled,
        // so whoever awaits it returns (as a closing scope's queued work does), and no host runs later.
        let unhosted = hostedJobs.withLock { $0.take() }
        await Deadline.run(until: deadline, clock: AnyBridgeClock(clock)) { [ended, closing] in
            if let unhosted {
                await Self.runGroup(unhosted, closing: closing)
                ended.fire()
            } else {
                await ended.wait()
            }
        }
        return ended.isFired
    }

    deinit {
        jobs.finish()
        root?.cancel()
    }
}
