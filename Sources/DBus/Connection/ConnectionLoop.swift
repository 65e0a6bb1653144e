internal import CDBus
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that owns one libdbus connection, and the thread-safe way in.
///
/// Every libdbus call on the connection happens on this thread. Other threads hand it work as
/// closures (`submit`); an eventfd wakes its `poll()` so the work runs promptly. Incoming
/// messages are dispatched on this thread: signals are decoded once and yielded straight into
/// the subscribers' `AsyncStream` continuations; replies resume the waiting callers'
/// continuations; method calls start a task running the exported handler.
final class ConnectionLoop: Sendable {
    typealias Command = @Sendable (LoopState) -> Void

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
    }

    private let inbox = Mutex(Inbox())
    let wakeFD: Int32

    init() throws(DBusError) {
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw DBusError(.failed, "eventfd failed: errno \(errno)") }
    }

    deinit { close(wakeFD) }

    /// Starts the thread, connects to `address` and registers with the bus; returns the unique name.
    func start(address: String) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let start = ThreadStart(loop: self, address: address, ready: continuation)
            let context = Unmanaged.passRetained(start).toOpaque()
            var thread = pthread_t()
            let status = pthread_create(
                &thread, nil,
                { raw in
                    let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
                    ThreadName.setCurrent("blebridge.dbus")
                    start.run()
                    return nil
                }, context)
            if status != 0 {
                Unmanaged<ThreadStart>.fromOpaque(context).release()
                continuation.resume(throwing: DBusError(.failed, "cannot start the D-Bus thread: error \(status)"))
            } else {
                pthread_detach(thread)
            }
        }
    }

    /// Queues `command` for the connection thread. False when the connection is closed.
    @discardableResult
    func submit(_ command: @escaping Command) -> Bool {
        // Only the first command of a batch needs a wake-up: the thread drains the eventfd
        // before it takes the batch, so later commands of the same batch are seen too.
        let (accepted, needsWake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.closed else { return (false, false) }
            inbox.commands.append(command)
            return (true, inbox.commands.count == 1)
        }
        if needsWake { wake() }
        return accepted
    }

    /// Runs `body` on the connection thread and returns its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable (LoopState) throws(DBusError) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = submit { state in
                do throws(DBusError) {
                    continuation.resume(returning: try body(state))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            if !accepted { continuation.resume(throwing: DBusError.connectionClosed) }
        }
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Called by the thread: the commands queued so far.
    func takeCommands() -> [Command] {
        inbox.withLock { inbox in
            guard !inbox.commands.isEmpty else { return [] }
            var commands: [Command] = []
            swap(&commands, &inbox.commands)
            return commands
        }
    }

    /// Called by the thread when it ends: refuses new commands and returns the leftovers.
    func closeInbox() -> [Command] {
        inbox.withLock { inbox in
            inbox.closed = true
            let commands = inbox.commands
            inbox.commands = []
            return commands
        }
    }

    var isClosed: Bool { inbox.withLock { $0.closed } }
}
