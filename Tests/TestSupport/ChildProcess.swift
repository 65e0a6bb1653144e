import Foundation
import Synchronization

/// A subprocess with captured output, for fixtures and end-to-end tests.
///
/// Output is collected on a background reader so the child never blocks on a full pipe.
///
/// Each child is also listed in a registry directory (`BLEBRIDGE_TEST_CHILDREN`, which
/// `scripts/test.sh` and `scripts/stress.sh` set) until it is released: a file named by its PID
/// that holds its start time. When the test process dies without releasing its children (killed
/// by a run's time limit, or by hand), their brokers, buses and gateways would keep running as
/// orphans and load the runs after it; `scripts/kill-test-children.sh` stops the ones listed.
/// Commands run to completion with ``run(_:_:environment:timeout:)`` are not listed: stopping one
/// midway does more harm than letting it finish (a `dpkg` stopped while unpacking left the package
/// half-installed, which the next run's `dpkg --purge` refused).
package final class ChildProcess: Sendable {
    package let executable: String
    package let arguments: [String]
    // Process is not Sendable; it is only touched under the lock.
    private let process: Mutex<Process>
    private let stdoutBuffer = OutputBuffer()
    private let stderrBuffer = OutputBuffer()
    /// This child's file in the registry (nil when it was not listed, or the file could not be written).
    package let registryFile: String?

    /// The registry directory of the test run (`BLEBRIDGE_TEST_CHILDREN`), if one is set.
    package static let registryDirectory: String? = ProcessInfo.processInfo.environment["BLEBRIDGE_TEST_CHILDREN"]

    /// Starts `executable` (a path, or a name looked up in PATH) with `arguments`.
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        currentDirectory: String? = nil, registry: String? = ChildProcess.registryDirectory
    ) throws {
        let path = try Self.resolve(executable)
        self.executable = path
        self.arguments = arguments
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        self.process = Mutex(process)
        // The child inherits the spawning thread's signal mask, and Swift's worker threads block
        // most signals (SIGTERM included), so a child spawned from one would ignore `stop()`'s
        // SIGTERM until the SIGKILL fallback. Spawn with an empty mask, then restore ours.
        var empty = sigset_t()
        var saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
        registryFile = registry.flatMap { Self.register(process.processIdentifier, in: $0) }
        stdoutBuffer.collect(out, name: "child-stdout")
        stderrBuffer.collect(err, name: "child-stderr")
    }

    /// Lists `pid` in `directory` with its start time (field 22 of `/proc/<pid>/stat`, which a
    /// reused PID does not share); returns the file, nil when it could not be written.
    private static func register(_ pid: Int32, in directory: String) -> String? {
        guard let startTime = startTime(of: pid) else { return nil }
        let file = "\(directory)/\(pid)"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try "\(startTime)\n".write(toFile: file, atomically: true, encoding: .utf8)
        } catch {
            return nil
        }
        return file
    }

    /// The start time of process `pid` in clock ticks since boot, nil once it is gone.
    package static func startTime(of pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name (which may hold spaces): state is field 3, the start time field 22.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }

    package var processIdentifier: Int32 { process.withLock { $0.processIdentifier } }
    package var isRunning: Bool { process.withLock { $0.isRunning } }
    package var standardOutput: String { stdoutBuffer.text }
    /// The inode numbers of the pipes that carry the child's standard output and error (each
    /// `pipe:[N]` in `/proc/self/fd` while its read end is open).
    package var outputPipeInodes: [UInt64] { [stdoutBuffer.pipeInode, stderrBuffer.pipeInode].compactMap { $0 } }
    package var standardError: String { stderrBuffer.text }

    /// Sends a signal (SIGTERM by default).
    package func signal(_ signal: Int32 = SIGTERM) {
        let pid = processIdentifier
        if isRunning { kill(pid, signal) }
    }

    /// Waits for exit up to `timeout`; returns the exit status, or nil on time-out.
    ///
    /// `timeout` counts the time this test process could run (`waitUntil`), and the child is
    /// checked once more at the end: a wall-clock loop that woke after its deadline (the
    /// cooperative pool held by other tests' synchronous work) gave up on a child that had long
    /// exited. `DecodeCommandTests` cases (0.25 s alone) failed that way under load.
    @discardableResult
    package func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        guard await waitUntil(timeout: timeout, { !isRunning }) else { return nil }
        // Let the readers reach end of file, so no output is lost; bounded, because a grandchild
        // (a daemon the child started) may keep the pipes open.
        _ = await waitUntil(timeout: .seconds(2), interval: .milliseconds(5)) {
            stdoutBuffer.isFinished && stderrBuffer.isFinished
        }
        return process.withLock { $0.terminationStatus }
    }

    /// Waits until `predicate` holds for the collected standard output (or error), polling.
    package func waitForOutput(
        timeout: Duration = .seconds(10), stream: KeyPath<ChildProcess, String> = \.standardOutput,
        _ predicate: (String) -> Bool
    ) async -> Bool {
        await waitUntil(timeout: timeout) { predicate(self[keyPath: stream]) }
    }

    /// Terminates (SIGTERM, then SIGKILL after `grace`) and waits.
    package func stop(grace: Duration = .seconds(3)) async {
        guard isRunning else { return }
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            await waitForExit(timeout: .seconds(5))
        }
    }

    deinit {
        let pid = process.withLock { $0.isRunning ? $0.processIdentifier : 0 }
        if pid > 0 { kill(pid, SIGKILL) }
        if let registryFile { unlink(registryFile) }
    }

    /// Runs to completion and returns (status, stdout, stderr).
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        let child = try ChildProcess(executable, arguments, environment: environment, registry: nil)
        guard let status = await child.waitForExit(timeout: timeout) else {
            await child.stop()
            throw FixtureError("\(executable) \(arguments.joined(separator: " ")) did not exit within \(timeout)")
        }
        return (status, child.standardOutput, child.standardError)
    }

    /// Finds `name` in PATH (or returns it when it is already a path).
    package static func resolve(_ name: String) throws -> String {
        if name.contains("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
        for directory in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"] {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw FixtureError("'\(name)' is not installed; run scripts/setup.sh (it installs the test dependencies)")
    }
}

/// Bytes collected from a child's pipe by its reader thread.
final class OutputBuffer: Sendable {
    private let data = Mutex(Data())
    private let finished = Atomic<Bool>(false)
    private let inode = Mutex<UInt64?>(nil)
    /// The inode of the pipe being read (set by `collect`).
    var pipeInode: UInt64? { inode.withLock { $0 } }
    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
    /// Appends what arrives on `pipe` until its end of file, reading on a thread of its own.
    ///
    /// Blocking reads, not `readabilityHandler`: that installs a libdispatch read source per pipe,
    /// and tearing hundreds of them down concurrently (a full parallel test run) corrupts
    /// libdispatch's epoll bookkeeping on Linux; the whole test process crashed with SIGSEGV in
    /// `_dispatch_event_loop_drain` (swiftlang/swift-corelibs-libdispatch#949). A blocking read
    /// never registers the descriptor with libdispatch.
    ///
    /// The read end is closed at end of file. Foundation closes it only when the `Process` that
    /// holds the `Pipe` is freed, and a full run left about 1,450 of them open in the test
    /// process (2,000 descriptors in all). With that many, `Process.run` (which lists
    /// `/proc/self/fd` to close every descriptor in the child) crashed the test process in
    /// Swift 6.3.1's Foundation: it copies each entry's whole 256-byte name and read past
    /// glibc's full directory buffer (SIGSEGV in `memcpy`, swiftlang/swift-corelibs-foundation#5472).
    func collect(_ pipe: Pipe, name: String) {
        let handle = pipe.fileHandleForReading
        var status = stat()
        if fstat(handle.fileDescriptor, &status) == 0 { inode.withLock { $0 = UInt64(status.st_ino) } }
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    append(Data(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            try? handle.close()
            finish()
        }
        thread.name = name
        thread.start()
    }
    /// Called when the pipe reached end of file.
    func finish() { finished.store(true, ordering: .releasing) }
    var isFinished: Bool { finished.load(ordering: .acquiring) }
    var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
}
