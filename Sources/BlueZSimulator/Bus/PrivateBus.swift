import DBus
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private `dbus-daemon` on a Unix socket in a temporary directory, for `blebridge simulate`
/// (without `--bus`) and `blebridge demo`. Its policy lets any client own any name, like a session
/// bus, so the simulator can own `org.bluez` without root.
package final class PrivateBus: Sendable {
    /// `unix:path=/tmp/blebridge-bus-…/bus,guid=…`: export it as `DBUS_SYSTEM_BUS_ADDRESS`.
    package let address: String
    /// The socket's directory; a SIGKILLed owner's is removed by the next bus made (``TemporaryWorkspace``).
    package var directory: String { workspace.path }
    private let workspace: TemporaryWorkspace
    private let process: Process
    /// Signalled by Foundation once the daemon has exited and been reaped.
    private let exited: DispatchSemaphore

    /// Starts `dbus-daemon` (from PATH or /usr/bin) and waits until it prints its address.
    /// `endingWithParent`: the daemon is ended when this process dies (``ChildCommand``).
    package static func start(timeout: Duration = .seconds(10), endingWithParent: Bool = false) async throws
        -> PrivateBus
    {
        let workspace = try TemporaryWorkspace(prefix: "blebridge-bus")
        let directory = workspace.url
        let socket = directory.appendingPathComponent("bus").path
        let config = directory.appendingPathComponent("bus.conf")
        try PrivateBusConfiguration.text(socketPath: socket).write(to: config, atomically: true, encoding: .utf8)
        guard
            let executable = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw SimulatorError(
                .busUnavailable, "dbus-daemon is not installed; install the dbus-daemon package (scripts/setup.sh does)"
            )
        }
        let process = Process()
        let command = ChildCommand.endingWithParent(
            executable, ["--config-file=\(config.path)", "--nofork", "--nopidfile", "--print-address=1"],
            bound: endingWithParent)
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try ChildCommand.run(process)
        // The daemon prints its address once the socket listens; read it on a background thread.
        let address = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread {
                        let data = output.fileHandleForReading.availableData
                        continuation.resume(
                            returning: String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(
                                String.init))
                    }
                }
            }
            group.addTask {
                // A deadline, not synchronisation: how long to wait for the bus address.
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let address, !address.isEmpty else {
            process.terminate()
            throw SimulatorError(.busUnavailable, "dbus-daemon did not start within \(timeout)")
        }
        return PrivateBus(address: address, workspace: workspace, process: process, exited: exited)
    }

    private init(address: String, workspace: TemporaryWorkspace, process: Process, exited: DispatchSemaphore) {
        self.address = address
        self.workspace = workspace
        self.process = process
        self.exited = exited
    }

    /// Stops the daemon and removes its directory.
    package func stop() {
        // SIGKILL: the bus holds no state worth a graceful exit. The wait is on the exit itself
        // (`waitUntilExit` spins a run loop on Linux), bounded by 3 s.
        let pid = process.processIdentifier
        if process.isRunning, pid > 0 {
            kill(pid, SIGKILL)
            _ = exited.wait(timeout: .now() + .seconds(3))
        }
        workspace.remove()
    }

    deinit { stop() }
}
