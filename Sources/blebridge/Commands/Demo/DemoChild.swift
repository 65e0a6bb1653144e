import BlueZSimulator
import Foundation
import Synchronization
import TaskPool

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process of `blebridge demo` (the broker, the gateways of `--gateways`), stopped with
/// the demo: spawned with an empty signal mask, told when it exits, and stopped with SIGTERM, then
/// SIGKILL.
final class DemoChild: Sendable {
    let name: String
    let processIdentifier: Int32
    // Process is not Sendable; it is only touched under the lock.
    private let process: Mutex<Process>
    /// Signalled by Foundation once the child has exited and been reaped.
    private let exited: DispatchSemaphore

    /// Starts `executable` with `arguments`; its standard output and error go to `output` (the
    /// demo's own standard error when nil). `onExit` runs once, on a Foundation thread, with the
    /// child's termination reason and status.
    init(
        name: String, executable: String, arguments: [String], output: FileHandle? = nil,
        onExit: @escaping @Sendable (_ signalled: Bool, _ status: Int32) -> Void = { _, _ in }
    ) throws {
        let process = Process()
        // Ended with the demo, even a killed one: the demo runs on TaskPool's threads.
        let command = ChildCommand.endingWithParent(executable, arguments, bound: TaskPool.isInstalled)
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = output ?? FileHandle.standardError
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { process in
            onExit(process.terminationReason == .uncaughtSignal, process.terminationStatus)
            exited.signal()
        }
        try ChildCommand.run(process)
        self.name = name
        self.processIdentifier = process.processIdentifier
        self.process = Mutex(process)
        self.exited = exited
    }

    var isRunning: Bool { process.withLock { $0.isRunning } }

    /// Sends `signal` if the child is still running.
    func signal(_ signal: Int32) {
        let pid = process.withLock { $0.isRunning ? $0.processIdentifier : 0 }
        if pid > 0 { kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if the child is still there after `grace`. Blocks the calling thread
    /// until it has exited (at most `grace` plus one second): call it off the cooperative pool
    /// (``stopped(grace:)``) or where blocking is harmless (at exit).
    func stop(grace: DispatchTimeInterval = .seconds(2)) {
        guard isRunning else { return }
        signal(SIGTERM)
        guard exited.wait(timeout: .now() + grace) == .timedOut else {
            exited.signal()
            return
        }
        signal(SIGKILL)
        if exited.wait(timeout: .now() + .seconds(1)) == .success { exited.signal() }
    }

    /// A child left running when the demo fails half-way is not left behind.
    deinit { signal(SIGKILL) }

    /// ``stop(grace:)`` on a thread of its own, awaited.
    func stopped(grace: DispatchTimeInterval = .seconds(2)) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                self.stop(grace: grace)
                continuation.resume()
            }
        }
    }
}
