internal import CEpoll
import Foundation
import Logging
import Synchronization
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// The state and the thread behind an ``EventLoop``. The thread holds the core (not the loop), so
/// the loop's owner releasing it is what stops the thread.
///
/// One iteration: wait in `epoll_wait` (the eventfd, the watched descriptors, and a timeout for
/// the earliest timer when the clock follows the real time); hand out the descriptors' events;
/// run the timers that are due on the clock, earliest first; then run the work queued so far,
/// in the order queued. Work queued while a batch runs waits for the next iteration, so
/// descriptors and timers are not starved by work that keeps queueing work.
final class EventLoopCore: Sendable {
    enum Work: Sendable {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Watcher {
        let fd: Int32
        let handler: @Sendable (Readiness) -> Void
    }

    private struct State {
        var work: [Work] = []
        var timers = TimerHeap<@Sendable () -> Void>()
        var nextTimerID: UInt64 = 1
        /// The thread is in `epoll_wait` with a timeout other than 0, or about to enter it: a
        /// wake-up must go through the eventfd.
        var idle = false
        /// The eventfd was written since the thread went idle (one write is enough).
        var signalled = false
        /// Something the thread has to look at happened since it last looked (work, a nearer
        /// timer, a move of a clock that does not follow the real time).
        var woken = false
        var stopping = false
        var stopped = false
        var whenStopped: [@Sendable () -> Void] = []

        /// Notes a wake-up; true when the caller must write the eventfd.
        mutating func wake() -> Bool {
            woken = true
            guard idle && !signalled else { return false }
            signalled = true
            return true
        }
    }

    let name: String
    let clock: any BridgeClock
    private let followsRealTime: Bool
    private let state = Mutex(State())
    /// The watched descriptors by token (token 0 is the eventfd). Only the thread reads or
    /// changes it; the lock only makes that visible to the compiler.
    private let watchers = Mutex([UInt64: Watcher]())
    private let nextToken = Atomic<UInt64>(1)
    /// The thread's `pthread_t` while it runs, 0 otherwise.
    private let threadID = Atomic<UInt>(0)
    private let epoll: Int32
    private let wakeFD: Int32

    init(name: String, clock: any BridgeClock) throws(EventLoopError) {
        self.name = name
        self.clock = clock
        self.followsRealTime = clock.followsRealTime
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw EventLoopError(.epoll, errno: errno) }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            let error = errno
            close(epoll)
            throw EventLoopError(.eventfd, errno: error)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, &event)
    }

    /// Closed only here: a thread that saw the loop idle may still be writing the eventfd after
    /// the loop's thread ended, but not after the last reference to the core is gone.
    deinit {
        close(wakeFD)
        close(epoll)
    }

    func start(executor: UnownedSerialExecutor, stackSize: Int) {
        let thread = Thread { [self] in
            ThreadName.setCurrent(name)
            threadID.store(UInt(pthread_self()), ordering: .releasing)
            run(executor: executor)
            threadID.store(0, ordering: .releasing)
        }
        thread.stackSize = stackSize
        thread.start()
    }

    var isCurrentThread: Bool { threadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    // MARK: Any thread

    /// Queues `work`; false (and nothing queued) once the loop has stopped.
    func enqueue(_ work: Work) -> Bool {
        let signal = state.withLock { state -> Bool? in
            guard !state.stopped else { return nil }
            state.work.append(work)
            return state.wake()
        }
        guard let signal else { return false }
        if signal { writeWake() }
        return true
    }

    /// Makes the thread look again at once (its clock moved).
    func wake() {
        if state.withLock({ $0.wake() }) { writeWake() }
    }

    func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () -> Void) -> EventLoopTimer {
        let scheduled = state.withLock { state -> (id: UInt64, signal: Bool)? in
            guard !state.stopping else { return nil }
            let id = state.nextTimerID
            state.nextTimerID += 1
            let nearest = state.timers.nextDeadline.map { deadline < $0 } ?? true
            state.timers.insert(.init(deadline: deadline, id: id, body: body))
            return (id, nearest && state.wake())
        }
        guard let scheduled else { return EventLoopTimer(id: 0, core: nil) }
        if scheduled.signal { writeWake() }
        return EventLoopTimer(id: scheduled.id, core: self)
    }

    func cancelTimer(_ id: UInt64) -> Bool {
        state.withLock { $0.timers.remove(id: id) }
    }

    /// The thread waits in `epoll_wait` (or is about to) with nothing to do before a wake-up or
    /// a timer (tests move a manual clock only then, to show that the move alone wakes it).
    var isIdle: Bool { state.withLock { $0.idle } }

    /// The earliest deadline among the timers set.
    var nextDeadline: ContinuousClock.Instant? { state.withLock { $0.timers.nextDeadline } }

    func watch(fd: Int32, interest: Readiness, _ handler: @escaping @Sendable (Readiness) -> Void) -> FDWatch? {
        let token = nextToken.wrappingAdd(1, ordering: .relaxed).oldValue
        let add: @Sendable () -> Bool = { [self] in
            var event = Self.event(interest, token: token)
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else { return false }
            watchers.withLock { $0[token] = Watcher(fd: fd, handler: handler) }
            return true
        }
        if isCurrentThread {
            guard add() else { return nil }
        } else if !enqueue(.closure({ if !add() { handler(.error) } })) {
            return nil
        }
        return FDWatch(token: token, core: self)
    }

    func unwatch(_ token: UInt64) {
        let remove: @Sendable () -> Void = { [self] in
            guard let watcher = watchers.withLock({ $0.removeValue(forKey: token) }) else { return }
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, watcher.fd, nil)
        }
        if isCurrentThread { remove() } else { _ = enqueue(.closure(remove)) }
    }

    func setInterest(_ token: UInt64, _ interest: Readiness) {
        let modify: @Sendable () -> Void = { [self] in
            guard let watcher = watchers.withLock({ $0[token] }) else { return }
            var event = Self.event(interest, token: token)
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, watcher.fd, &event)
        }
        if isCurrentThread { modify() } else { _ = enqueue(.closure(modify)) }
    }

    /// Stops the thread once the work queued so far has run (timers not yet due never run);
    /// `then` runs on the thread as its last act, or at once when it has stopped already.
    func shutdown(then: (@Sendable () -> Void)?) {
        let (signal, stopped) = state.withLock { state -> (Bool, Bool) in
            if state.stopped { return (false, true) }
            state.stopping = true
            if let then { state.whenStopped.append(then) }
            return (state.wake(), false)
        }
        if signal { writeWake() }
        if stopped { then?() }
    }

    /// Runs `body` on the thread as its last act, without asking it to stop (at once when it has
    /// stopped already).
    func whenStopped(_ body: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state -> Bool in
            if !state.stopped { state.whenStopped.append(body) }
            return state.stopped
        }
        if stopped { body() }
    }

    private func writeWake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: The thread

    private func run(executor: UnownedSerialExecutor) {
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        // The queue's two buffers take turns: the thread runs one while others append to the other,
        // so a queue that empties and refills (a hand-over per reading) keeps its capacity instead
        // of allocating on every first append (issue 20).
        var work: [Work] = []
        while true {
            let timeout = waitTimeout()
            // `events` is never empty; Swift 6.0 imports epoll_wait's buffer as non-optional.
            let ready = events.withUnsafeMutableBufferPointer {
                epoll_wait(epoll, $0.baseAddress!, Int32($0.count), timeout)
            }
            if timeout != 0 {
                state.withLock { state in
                    state.idle = false
                    state.signalled = false
                }
            }
            // Only EINTR can fail here: the descriptor and the buffer are the loop's own.
            for index in 0..<max(0, Int(ready)) {
                let token = events[index].data.u64
                if token == 0 {
                    var count: UInt64 = 0
                    _ = read(wakeFD, &count, 8)
                    continue
                }
                // Looked up per event: a handler may have cancelled another watch of this batch.
                guard let watcher = watchers.withLock({ $0[token] }) else { continue }
                watcher.handler(Self.readiness(events[index].events))
            }
            let (due, stopping) = state.withLock { state in
                // Read under the lock: work queued after a move of a manual clock sees the move,
                // so the timers it made due run first.
                let due = state.timers.popDue(now: clock.now)
                swap(&work, &state.work)
                return (due, state.stopping)
            }
            for timer in due { timer.body() }
            perform(work, executor: executor)
            work.removeAll(keepingCapacity: true)
            if stopping { break }
        }
        // Stopping: what was queued before the stop (and what that queues) still runs.
        var finished: [@Sendable () -> Void] = []
        while true {
            let work = state.withLock { state -> [Work] in
                var work: [Work] = []
                swap(&work, &state.work)
                if work.isEmpty {
                    state.stopped = true
                    state.timers.removeAll()
                    swap(&finished, &state.whenStopped)
                }
                return work
            }
            if work.isEmpty { break }
            perform(work, executor: executor)
        }
        watchers.withLock { $0.removeAll() }
        for body in finished { body() }
    }

    /// The `epoll_wait` timeout in milliseconds: 0 when there is something to do now, -1 to wait
    /// for a wake-up only. Marks the thread idle when it will wait.
    private func waitTimeout() -> Int32 {
        state.withLock { state in
            let now = clock.now
            let woken = state.woken
            state.woken = false
            if woken || !state.work.isEmpty || state.stopping { return 0 }
            var timeout: Int32 = -1
            if let next = state.timers.nextDeadline {
                if next <= now { return 0 }
                // A clock that does not follow the real time wakes the thread when it moves.
                if followsRealTime { timeout = Self.milliseconds(now.duration(to: next)) }
            }
            state.idle = true
            return timeout
        }
    }

    private func perform(_ work: [Work], executor: UnownedSerialExecutor) {
        for item in work {
            switch item {
            case .job(let job): job.runSynchronously(on: executor)
            case .closure(let body): body()
            }
        }
    }

    /// Whole milliseconds, rounded up (a timer never fires early), at least 1.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        let nanoseconds = duration.inNanoseconds
        let milliseconds = nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)
        return Int32(clamping: max(1, milliseconds))
    }

    private static func event(_ interest: Readiness, token: UInt64) -> epoll_event {
        var event = epoll_event()
        if interest.contains(.readable) { event.events |= EPOLLIN.rawValue }
        if interest.contains(.writable) { event.events |= EPOLLOUT.rawValue }
        event.data.u64 = token
        return event
    }

    private static func readiness(_ events: UInt32) -> Readiness {
        var readiness: Readiness = []
        if events & EPOLLIN.rawValue != 0 { readiness.insert(.readable) }
        if events & EPOLLOUT.rawValue != 0 { readiness.insert(.writable) }
        if events & (EPOLLHUP.rawValue | EPOLLRDHUP.rawValue) != 0 { readiness.insert(.hangUp) }
        if events & EPOLLERR.rawValue != 0 { readiness.insert(.error) }
        return readiness
    }
}
