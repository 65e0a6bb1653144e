import Timekeeping

/// One named thread that waits in `epoll(7)` and runs, one at a time and in order: Swift jobs of
/// the actors pinned to it, closures queued from any thread, timers on an injected clock, and the
/// handlers of the descriptors it watches. Other threads wake it through an eventfd.
///
/// ```swift
/// let loop = try EventLoop(name: "blebridge.outbox", clock: SystemClock())
/// loop.execute { … }                                    // on the loop's thread, in order
/// let timer = loop.schedule(after: .seconds(1)) { … }   // on the loop's clock
/// let watch = loop.watch(fd: socket, interest: .readable) { readiness in … }
///
/// actor Store {                                         // an actor pinned to the loop
///     nonisolated let loop: EventLoop
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
/// }
/// ```
///
/// - Jobs and closures run in the order queued. In each wake-up the loop first hands out the
///   descriptors' events, then runs the timers that are due (earliest first; one deadline in the
///   order set), then the work queued before the wake-up.
/// - Timers read the loop's clock. On a clock that follows the real time the thread waits for
///   the earliest one in `epoll_wait`; on a ``ManualClock`` it waits until the clock is moved,
///   so a test advances the clock and the timers due fire, with no real time passing.
/// - Blocking in a handler holds up everything on the loop: keep them short.
/// - The thread stops when the loop is released (or at ``shutdown(then:)``), after the work
///   already queued; timers not yet due are dropped, watched descriptors are left to their owners.
///
/// Modelled on swift-nio's `SelectableEventLoop` (epoll, an eventfd, a deadline-ordered queue of
/// scheduled tasks) and `EmbeddedEventLoop` (time that moves only when told).
package final class EventLoop: SerialExecutor {
    let core: EventLoopCore

    /// Starts the thread, named `name` (the kernel keeps 15 bytes: `ps -L`, `top -H`, `perf`).
    package init(name: String, clock: any BridgeClock = SystemClock(), stackSize: Int = 512 * 1024)
        throws(EventLoopError)
    {
        let core = try EventLoopCore(name: name, clock: clock)
        self.core = core
        // Unowned: jobs exist only while their actor (which holds this loop) is alive.
        core.start(executor: asUnownedSerialExecutor(), stackSize: stackSize)
        clock.whenMoved { [weak core] in core?.wake() }
    }

    deinit { core.shutdown(then: nil) }

    package var name: String { core.name }
    /// The clock the timers read.
    package var clock: any BridgeClock { core.clock }

    /// True on the loop's thread.
    package var isCurrentThread: Bool { core.isCurrentThread }

    // MARK: Work

    package func enqueue(_ job: consuming ExecutorJob) {
        _ = core.enqueue(.job(UnownedJob(job)))
    }

    /// Runs `body` on the loop's thread after the work already queued; false (and `body`
    /// dropped) once the loop has stopped.
    @discardableResult
    package func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
        core.enqueue(.closure(body))
    }

    /// Lets `assumeIsolated` accept closures run by ``execute(_:)``, timers and handlers: they run
    /// on the loop's thread, where only this loop's work runs, one item at a time.
    package func checkIsolated() {
        precondition(isCurrentThread, "expected to run on the \(name) event loop's thread")
    }

    // MARK: Timers

    /// Runs `body` on the loop's thread once the loop's clock reaches `deadline`. A loop that
    /// is stopping runs no new timer.
    @discardableResult
    package func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void)
        -> EventLoopTimer
    {
        core.schedule(at: deadline, body)
    }

    /// Runs `body` on the loop's thread once `delay` has passed on the loop's clock.
    @discardableResult
    package func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> EventLoopTimer {
        core.schedule(at: core.clock.now + delay, body)
    }

    /// The earliest deadline among the timers set, if any (tests wait for a timer to be armed
    /// before they move a manual clock).
    package var nextDeadline: ContinuousClock.Instant? { core.nextDeadline }

    // MARK: Descriptors

    /// Calls `handler` on the loop's thread whenever `fd` is ready for what `interest` names
    /// (level-triggered: again and again until it is read or written), or has hung up or failed.
    /// The descriptor stays the caller's.
    ///
    /// On the loop's thread the watch starts at once, and the answer is nil when the kernel
    /// refuses the descriptor. From another thread it starts behind the work already queued, and
    /// a refused descriptor gets one `.error` call. Nil once the loop has stopped.
    package func watch(fd: Int32, interest: Readiness, _ handler: @escaping @Sendable (Readiness) -> Void)
        -> FDWatch?
    {
        core.watch(fd: fd, interest: interest, handler)
    }

    // MARK: Lifecycle

    /// Stops the thread after the work already queued (and what that queues); `then` runs on the
    /// thread as its last act (at once when it has stopped already). Later work is refused.
    package func shutdown(then: (@Sendable () -> Void)? = nil) {
        core.shutdown(then: then)
    }
}
