import Bluetooth
internal import CEpoll
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads every `AcquireNotify` socket (`SOCK_SEQPACKET`, one notification per packet) of the process on ONE
/// dedicated thread that waits in `epoll_wait(2)` on all of them, so the blocking wait never runs on Swift's
/// cooperative pool and 50 subscriptions cost one thread, not 50. (epoll, not `poll`: a wake-up costs the
/// same whether 1 or 64 sockets are open, where `poll` re-checks every socket on every notification.)
///
/// ```swift
/// let registration = NotifySocketPoller.shared.add(fd: fd, onValue: { channel.yield($0) }, onEnd: { … })
/// …
/// registration.stop()   // closes our end: BlueZ disables the notifications
/// ```
///
/// Sockets are added and removed through a command queue and a wake-up pipe: only the thread touches the
/// poll set and closes descriptors, so a descriptor number cannot be reused while a stale event for it is
/// being handled (entries are keyed by a token that is never reused).
package final class NotifySocketPoller: Sendable {
    /// The process's poller; its thread starts with the first socket and then stays (it sleeps in `poll`).
    package static let shared = NotifySocketPoller()

    /// One socket's subscription to the poller.
    package struct Registration: Sendable {
        let token: UInt64
        let poller: NotifySocketPoller

        /// Stops reading; the poller's thread first delivers what the socket already holds (sent
        /// before the stop), then closes the descriptor (which makes BlueZ stop notifying), then
        /// calls `then` (on its thread; at once when the poller has shut down). `onEnd` is not
        /// called after `stop()`.
        package func stop(then: (@Sendable () -> Void)? = nil) { poller.remove(token, then: then) }
    }

    private struct Entry {
        let fd: Int32
        let onValue: @Sendable (Data) -> Void
        let onEnd: @Sendable () -> Void
    }

    private enum Command {
        case add(UInt64, Entry)
        case remove(UInt64, then: (@Sendable () -> Void)?)
        case shutdown
    }

    private struct State {
        var nextToken: UInt64 = 1
        var commands: [Command] = []
        var started = false
        var finished = false
        /// Sockets the thread has not yet ended or removed (for tests and diagnostics).
        var open = 0
    }

    private let state = Mutex(State())
    /// The wake-up pipe: [read end, write end], non-blocking, close-on-exec.
    private let wake: (read: Int32, write: Int32)
    /// Most packets read from one socket per wake-up before the others get their turn.
    private static let packetsPerTurn = 64

    private let threadName: String

    /// `threadName` names the thread (`/proc/self/task/*/comm` shows its first 15 bytes).
    package init(threadName: String = "blebridge.notify") {
        self.threadName = threadName
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wake = (ends[0], ends[1])
    }

    /// Sockets being read (added and neither ended nor removed yet).
    package var openSockets: Int { state.withLock { $0.open } }

    /// Starts reading `fd` (taking ownership of it). `onValue` runs on the poller's thread for every packet, in
    /// order; `onEnd` once when the socket closes by itself (BlueZ closes it when the link drops or
    /// notifications stop, or at once when the poller was shut down), never after ``Registration/stop()``.
    /// Keep both short: they hold up every socket.
    package func add(
        fd: Int32, onValue: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void
    ) -> Registration {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let (token, accepted, startThread) = state.withLock { state -> (UInt64, Bool, Bool) in
            let token = state.nextToken
            state.nextToken += 1
            guard !state.finished else { return (token, false, false) }
            state.commands.append(.add(token, Entry(fd: fd, onValue: onValue, onEnd: onEnd)))
            state.open += 1
            defer { state.started = true }
            return (token, true, !state.started)
        }
        if !accepted {
            // The poller was shut down: the socket ends at once.
            close(fd)
            onEnd()
        } else if startThread {
            start()
        } else {
            signal()
        }
        return Registration(token: token, poller: self)
    }

    private func remove(_ token: UInt64, then: (@Sendable () -> Void)?) {
        let queued = state.withLock { state -> Bool in
            guard !state.finished else { return false }  // the thread closed every socket already
            state.commands.append(.remove(token, then: then))
            return true
        }
        if queued { signal() } else { then?() }
    }

    /// Stops the thread and closes every socket without calling `onEnd` (for pollers other than `shared`).
    package func shutdown() {
        let started = state.withLock { state -> Bool in
            state.commands.append(.shutdown)
            state.finished = true  // later adds close their descriptor at once
            return state.started
        }
        if started {
            signal()
        } else {
            close(wake.read)
            close(wake.write)
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)  // EAGAIN: the pipe is full, the thread is awake anyway
    }

    private func start() {
        let thread = Thread { [self] in
            ThreadName.setCurrent(threadName)
            run()
        }
        thread.stackSize = 256 * 1024
        thread.start()
    }

    // MARK: The thread

    private func run() {
        var entries: [UInt64: Entry] = [:]
        var buffer = [UInt8](repeating: 0, count: ATTLimits.maximumMTU)
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        // Token 0 is the wake-up pipe; sockets have tokens from 1.
        guard epoll >= 0, watch(wake.read, token: 0, in: epoll) else {
            state.withLock { $0.finished = true }
            close(wake.read)
            close(wake.write)
            return
        }
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        loop: while true {
            // Commands first: adds, removals (closing the descriptor), shutdown.
            let commands = state.withLock { state -> [Command] in
                defer { state.commands.removeAll(keepingCapacity: true) }
                return state.commands
            }
            for command in commands {
                switch command {
                case .add(let token, let entry):
                    if watch(entry.fd, token: token, in: epoll) {
                        entries[token] = entry
                    } else {
                        end(entry, notify: true)
                    }
                case .remove(let token, let then):
                    // What the socket already holds was sent before the stop (a link drop reaches
                    // us through D-Bus, often before we read the last notifications): deliver it.
                    if let entry = entries.removeValue(forKey: token) {
                        readPackets(entry, into: &buffer, limit: Self.packetsAtStop)
                        end(entry, notify: false)
                    }
                    then?()
                case .shutdown:
                    for entry in entries.values { end(entry, notify: false) }
                    entries.removeAll()
                    break loop
                }
            }
            // `events` is never empty; Swift 6.0 imports epoll_wait's buffer as non-optional.
            let ready = events.withUnsafeMutableBufferPointer {
                epoll_wait(epoll, $0.baseAddress!, Int32($0.count), -1)
            }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<Int(ready) {
                let token = events[index].data.u64
                if token == 0 {
                    drainWake()
                    continue
                }
                guard let entry = entries[token] else { continue }
                if !readPackets(entry, into: &buffer) {
                    entries[token] = nil
                    end(entry, notify: true)  // closing the descriptor also removes it from the epoll set
                }
            }
        }
        // Only a failing epoll_wait (not EINTR) gets here with sockets left: their listeners learn it.
        let unhandled = state.withLock { state -> [Command] in
            state.finished = true
            defer { state.commands.removeAll() }
            return state.commands
        }
        for entry in entries.values { end(entry, notify: true) }
        for case .remove(_, let then) in unhandled { then?() }
        close(epoll)
        close(wake.read)
        close(wake.write)
    }

    /// Adds `fd` to the epoll set, reporting readiness with `token`.
    private func watch(_ fd: Int32, token: UInt64, in epoll: Int32) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = token
        return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0
    }

    /// Reads what is waiting on `entry`'s socket, at most `limit` packets; false when the socket ended
    /// (closed by the peer or failed).
    @discardableResult
    private func readPackets(_ entry: Entry, into buffer: inout [UInt8], limit: Int = packetsPerTurn) -> Bool {
        let size = buffer.count
        for _ in 0..<limit {
            let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, size) }
            if count > 0 {
                entry.onValue(buffer.withUnsafeBytes { Data(bytes: $0.baseAddress!, count: count) })
            } else if count < 0 && errno == EINTR {
                continue
            } else if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return true
            } else {
                return false
            }
        }
        return true
    }

    /// Most packets read from a stopped socket before it is closed: more than its receive buffer
    /// holds, so everything sent before the stop, yet a bound against a peer that keeps writing.
    private static let packetsAtStop = 4096

    private func end(_ entry: Entry, notify: Bool) {
        close(entry.fd)
        state.withLock { $0.open -= 1 }
        if notify { entry.onEnd() }
    }

    private func drainWake() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while scratch.withUnsafeMutableBytes({ read(wake.read, $0.baseAddress, 64) }) > 0 {}
    }
}
