import Bluetooth
import EventLoop
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads every `AcquireNotify` socket (`SOCK_SEQPACKET`, one notification per packet) of the process on ONE
/// named ``EventLoop`` (`blebridge.notify`), a watched descriptor per socket, so the blocking wait never runs on
/// Swift's cooperative pool and 50 subscriptions cost one thread, not 50. (The loop waits in `epoll`: a
/// wake-up costs the same whether 1 or 64 sockets are open, where `poll` re-checks every socket each time.)
///
/// ```swift
/// let registration = NotifySocketPoller.shared.add(fd: fd, onValue: { channel.yield(bytes: $0) }, onEnd: { … })
/// …
/// registration.stop()   // closes our end: BlueZ disables the notifications
/// ```
///
/// Only the loop's thread watches, reads and closes the sockets: adds and removals are queued to it in
/// order, so a descriptor number cannot be reused while an event for it is being handled (a socket is known
/// by a token that is never reused, and its watch is cancelled on the thread before the descriptor closes).
package final class NotifySocketPoller: Sendable {
    /// The process's poller; its loop starts with the first socket and then stays (it sleeps in `epoll`).
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

    /// A socket being read: what the loop's thread needs to end it.
    private struct Socket {
        let fd: Int32
        let onValue: @Sendable (UnsafeRawBufferPointer) -> Void
        let onEnd: @Sendable () -> Void
        let watch: FDWatch
    }

    private struct State {
        var nextToken: UInt64 = 1
        /// The sockets watched, by token (only the loop's thread adds or removes them).
        var sockets: [UInt64: Socket] = [:]
        /// Sockets added and neither ended nor removed yet (for tests and diagnostics).
        var open = 0
        /// Shut down: later sockets are closed and ended at once.
        var finished = false
    }

    private let state = Mutex(State())
    /// The loop every socket is read on; nil when the kernel refused it one (every socket then ends at once).
    package let loop: EventLoop?
    /// Most packets read from one socket per wake-up before the others get their turn.
    private static let packetsPerTurn = 64
    /// Most packets read from a stopped socket before it is closed: more than its receive buffer
    /// holds, so everything sent before the stop, yet a bound against a peer that keeps writing.
    private static let packetsAtStop = 4096

    /// `threadName` names the loop's thread (`/proc/self/task/*/comm` shows its first 15 bytes).
    package init(threadName: String = "blebridge.notify") {
        do {
            loop = try EventLoop(name: threadName, stackSize: 256 * 1024)
        } catch {
            Self.logger.error("cannot start the \(threadName) thread; notification sockets end at once: \(error)")
            loop = nil
        }
    }

    private static let logger = Logger(label: "notify")

    /// Sockets being read (added and neither ended nor removed yet).
    package var openSockets: Int { state.withLock { $0.open } }

    /// Starts reading `fd` (taking ownership of it). `onValue` runs on the poller's thread for every packet, in
    /// order, with the packet's bytes lent for the call only (the read buffer is reused: copy what you keep; a
    /// `Data` made for every packet cost two allocations, issue 20). `onEnd` runs once when the socket closes
    /// by itself (BlueZ closes it when the link drops or notifications stop, or at once when the poller was
    /// shut down), never after ``Registration/stop()``. Keep both short: they hold up every socket.
    package func add(
        fd: Int32, onValue: @escaping @Sendable (UnsafeRawBufferPointer) -> Void, onEnd: @escaping @Sendable () -> Void
    ) -> Registration {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let token = state.withLock { state -> UInt64? in
            guard !state.finished, loop != nil else { return nil }
            defer { state.nextToken += 1 }
            state.open += 1
            return state.nextToken
        }
        guard let token, let loop, loop.execute({ self.start(token, fd: fd, onValue: onValue, onEnd: onEnd) }) else {
            // Shut down (or no loop): the socket ends at once.
            if token != nil { state.withLock { $0.open -= 1 } }  // the loop stopped after the count
            close(fd)
            onEnd()
            return Registration(token: 0, poller: self)
        }
        return Registration(token: token, poller: self)
    }

    private func remove(_ token: UInt64, then: (@Sendable () -> Void)?) {
        guard let loop, loop.execute({ self.stop(token, then: then) }) else {
            then?()  // the loop has stopped and closed every socket already
            return
        }
    }

    /// Closes every socket without calling `onEnd`, then stops the loop's thread; `then` runs on that thread
    /// as its last act (at once when it has stopped already). For pollers other than `shared`.
    package func shutdown(then: (@Sendable () -> Void)? = nil) {
        state.withLock { $0.finished = true }  // later adds close their descriptor at once
        guard let loop else {
            then?()
            return
        }
        loop.execute { self.closeAll() }
        loop.shutdown(then: then)
    }

    // MARK: On the loop's thread

    private func start(
        _ token: UInt64, fd: Int32, onValue: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
        onEnd: @escaping @Sendable () -> Void
    ) {
        // A shutdown that came between the add and now has closed the others: this one ends like a late add.
        var watch: FDWatch?
        if !state.withLock({ $0.finished }) {
            watch = loop?.watch(fd: fd, interest: .readable) { [self] _ in
                // Readable, hung up or failed: read what is there; an end of file or an error ends the socket.
                if !readPackets(fd, onValue: onValue, limit: Self.packetsPerTurn) { end(token, notify: true) }
            }
        }
        guard let watch else {
            close(fd)
            state.withLock { $0.open -= 1 }
            onEnd()
            return
        }
        state.withLock { $0.sockets[token] = Socket(fd: fd, onValue: onValue, onEnd: onEnd, watch: watch) }
    }

    private func stop(_ token: UInt64, then: (@Sendable () -> Void)?) {
        // What the socket already holds was sent before the stop (a link drop reaches us through D-Bus,
        // often before we read the last notifications): deliver it.
        if let socket = state.withLock({ $0.sockets[token] }) {
            readPackets(socket.fd, onValue: socket.onValue, limit: Self.packetsAtStop)
            end(token, notify: false)
        }
        then?()
    }

    private func closeAll() {
        let tokens = state.withLock { Array($0.sockets.keys) }
        for token in tokens { end(token, notify: false) }
    }

    /// Cancels the socket's watch (its handler is not called again), closes it and, when `notify`, tells
    /// its listener.
    private func end(_ token: UInt64, notify: Bool) {
        guard
            let socket = state.withLock({ state -> Socket? in
                guard let socket = state.sockets.removeValue(forKey: token) else { return nil }
                state.open -= 1
                return socket
            })
        else { return }
        socket.watch.cancel()
        close(socket.fd)
        if notify { socket.onEnd() }
    }

    /// Reads what is waiting on `fd`, at most `limit` packets; false when the socket ended (closed by the
    /// peer or failed).
    @discardableResult
    private func readPackets(_ fd: Int32, onValue: @Sendable (UnsafeRawBufferPointer) -> Void, limit: Int) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: ATTLimits.maximumMTU, alignment: 1) { buffer in
            for _ in 0..<limit {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count > 0 {
                    onValue(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
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
    }
}
