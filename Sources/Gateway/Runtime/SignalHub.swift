internal import CSignalPipe
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The process's one receiver of the signals ``SignalEvents`` hands out.
///
/// A C handler (`CSignalPipe`) writes each signal's number to a pipe, and a thread of its own
/// (`blebridge.signals`) reads the pipe and feeds every stream that asked for that signal. The
/// handler is in place the moment ``subscribe(_:)`` returns, and the thread takes every
/// asynchronous signal (its mask is empty), so a handled signal always has a thread to run on
/// whatever the others block (the pool's workers and the loops they start block them all).
///
/// It replaced libdispatch signal sources, which set the disposition to ignored and install
/// their handler later, at registration on libdispatch's own thread: a signal sent in that
/// window was ignored (`SignalEventsTests`; `blebridge simulate` lost the SIGINT sent on seeing
/// "Press Ctrl-C" in 2 of 7 `make stress` runs, 2026-12-05).
final class SignalHub: Sendable {
    static let shared = SignalHub()

    private struct Subscriber {
        let signals: Set<Int32>
        let continuation: AsyncStream<Int32>.Continuation
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var forwarded: Set<Int32> = []
    }

    private let state = Mutex(State())
    /// Whether the pipe was made. Without it no handler is installed: the signals keep their
    /// default action (SIGTERM still ends the process), rather than being swallowed.
    private let piped: Bool

    private init() {
        let readEnd = blebridge_signal_pipe_open()
        piped = readEnd >= 0
        guard piped else { return }
        // The hub is the process's, never freed: the thread holds it for good.
        let thread = Thread { [self] in
            // Else it keeps its creator's name (a `blebridge.pool` worker's).
            ThreadName.setCurrent("blebridge.signals")
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            var numbers = [UInt8](repeating: 0, count: 64)
            while true {
                let count = numbers.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                // Each signal once per read, in the order first seen: the kernel merges a pending
                // standard signal too, and a flood (a SIGHUP every 0.5 ms in RestartSignalTests)
                // then costs one delivery per wake-up, not one per signal.
                var seen: Set<UInt8> = []
                for number in numbers[0..<count] where seen.insert(number).inserted { deliver(Int32(number)) }
            }
        }
        thread.start()
    }

    /// A stream of `signals` as they come; their handler is installed before this returns.
    func subscribe(_ signals: [Int32]) -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let id = state.withLock { state in
            for number in signals where piped && !state.forwarded.contains(number) {
                if blebridge_signal_forward(number) == 0 { state.forwarded.insert(number) }
            }
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(signals: Set(signals), continuation: continuation)
            return state.nextID
        }
        continuation.onTermination = { [self] _ in
            _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Yields outside the lock: a stream's end (`onTermination`, which takes the lock) runs while
    /// Swift holds the cancelled reader's status lock, and a yield that resumes that reader takes
    /// the same status lock, so a yield under our lock deadlocked against a cancellation (both
    /// threads waited for good: `SignalEventsTests`, `RestartSignalTests`). Only this thread
    /// delivers, so the signals keep their order.
    private func deliver(_ number: Int32) {
        let continuations = state.withLock { state in
            state.subscribers.values.filter { $0.signals.contains(number) }.map(\.continuation)
        }
        for continuation in continuations { continuation.yield(number) }
    }
}
