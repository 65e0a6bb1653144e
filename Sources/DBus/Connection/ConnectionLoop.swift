internal import CDBus
import EventLoop
import Logging
import Synchronization
import Timekeeping

/// The thread that owns one libdbus connection, and the thread-safe way in: a named
/// ``EventLoop`` (`blebridge.dbus`), the connection's own or one its owner shares among
/// connections (each successive connection of a client that reconnects).
///
/// Every libdbus call on the connection happens on the loop's thread. Other threads hand it work
/// as commands (`submit`), run in order; libdbus's watches are descriptor watches of the loop and
/// its timeouts are the loop's timers (``LoopState``). Incoming messages are dispatched on this
/// thread after every command batch, watch and timeout: signals are decoded once and handed to
/// the subscribers (a handler called here, or an `AsyncStream` continuation); replies resume the
/// waiting callers' continuations; method calls start a task running the exported handler.
/// Actors pinned to the connection (``DBusConnection/serialExecutor``) run on the same thread.
final class ConnectionLoop: Sendable {
    typealias Command = @Sendable (LoopState) -> Void

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
    }

    private let inbox = Mutex(Inbox())
    let eventLoop: EventLoop
    /// The connection's state, made on the loop's thread at the start and read only there
    /// (commands, watch handlers, timers). Never touched from another thread, so never raced;
    /// `nonisolated(unsafe)` because the compiler cannot see that confinement.
    private nonisolated(unsafe) var state: LoopState?

    /// A loop on `eventLoop` (shared with other connections, one after another or at once), or
    /// on a thread of its own (``makeThread()``) when nil.
    init(on eventLoop: EventLoop?) throws(DBusError) {
        if let eventLoop {
            self.eventLoop = eventLoop
        } else {
            self.eventLoop = try Self.makeThread()
        }
    }

    /// A thread for D-Bus connections (`blebridge.dbus`).
    static func makeThread() throws(DBusError) -> EventLoop {
        do {
            // 8 MiB like the thread it replaced (a default pthread): decoding nested values
            // recurses; only the pages used are resident.
            return try EventLoop(name: "blebridge.dbus", clock: SystemClock(), stackSize: 8 << 20)
        } catch {
            throw DBusError(.failed, "cannot start the D-Bus thread: \(error)")
        }
    }

    /// Connects to `address` on the loop's thread and registers with the bus; returns the unique name.
    func start(address: String) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let started = eventLoop.execute { [self] in
                let state = LoopState(loop: self)
                self.state = state
                do throws(DBusError) {
                    let name = try state.connect(address: address)
                    continuation.resume(returning: name)
                } catch {
                    state.shutDown(reason: error)
                    continuation.resume(throwing: error)
                    finish(state)
                }
            }
            if !started { continuation.resume(throwing: DBusError(.failed, "the D-Bus thread has stopped")) }
        }
    }

    /// Queues `command` for the connection thread. False when the connection is closed.
    @discardableResult
    func submit(_ command: @escaping Command) -> Bool {
        // Only the first command of a batch queues a turn: the turn takes the whole batch.
        let (accepted, needsTurn) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.closed else { return (false, false) }
            inbox.commands.append(command)
            return (true, inbox.commands.count == 1)
        }
        if needsTurn { eventLoop.execute { [self] in runCommands() } }
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

    var isClosed: Bool { inbox.withLock { $0.closed } }

    // MARK: On the loop's thread

    /// A descriptor of libdbus's is ready (``LoopState/handleWatch(fd:_:)``).
    func handleWatch(fd: Int32, _ readiness: Readiness) {
        guard let state, !state.finished else { return }
        state.handleWatch(fd: fd, readiness)
        afterTurn(state)
    }

    /// A libdbus timeout is due (its key: the `DBusTimeout` pointer's bits).
    func fireTimeout(_ key: Int) {
        guard let state, !state.finished, let timeout = OpaquePointer(bitPattern: key) else { return }
        state.fireTimeout(timeout)
        afterTurn(state)
    }

    /// The commands queued so far, then what they made ready to dispatch.
    private func runCommands() {
        guard let state else { return }
        let commands = inbox.withLock { inbox -> [Command] in
            var commands: [Command] = []
            swap(&commands, &inbox.commands)
            return commands
        }
        for command in commands { command(state) }
        afterTurn(state)
    }

    /// After every command batch, watch and timeout: dispatch what libdbus has read, and end
    /// the loop once the connection is shut down.
    func afterTurn(_ state: LoopState) {
        state.dispatchAll()
        if state.finished { finish(state) }
    }

    /// Refuses new commands, runs the leftovers on the finished state (they fail cleanly), and
    /// stops the thread.
    private func finish(_ state: LoopState) {
        let leftovers = inbox.withLock { inbox -> [Command]? in
            guard !inbox.closed else { return nil }
            inbox.closed = true
            let commands = inbox.commands
            inbox.commands = []
            return commands
        }
        guard let leftovers else { return }
        for command in leftovers { command(state) }
        // The thread stays until the event loop is released (with the connection, or by the owner
        // that shares it among connections): actors pinned to it (``DBusConnection/serialExecutor``)
        // still run there after the connection ended. Its watches and timers went with the state.
        self.state = nil
    }
}
