import DBus
import Foundation
import Timekeeping

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the version of the bluetoothd that owns `org.bluez`, which BlueZ does not put on D-Bus:
/// the bus gives the owner's process id (`GetConnectionUnixProcessID`), `/proc/<pid>/cmdline`
/// (readable by any user, unlike `/proc/<pid>/exe` of a root process) its `argv[0]`, and only when
/// that is an absolute path named `bluetoothd`, of a regular file owned by root (or this user) and
/// writable by nobody else, `<path> --version` is run (on a thread of its own, never the
/// cooperative pool, and killed when it does not exit within ``timeout``). Anything else leaves the
/// version unknown, with the step that failed (``BluetoothdVersionError``): e.g. the simulator, or
/// a bus whose daemon sees another PID namespace than the gateway (a container).
///
/// The version is that of the file at the path: a bluetoothd upgraded on disk but not restarted
/// is reported with the new version (Debian's package restarts the service).
public enum BluetoothdVersionProbe {
    /// What was found, and where.
    public struct Found: Sendable, Equatable, CustomStringConvertible {
        public let version: BluetoothdVersion
        /// The `argv[0]` of `org.bluez`'s owner, that was run with `--version`.
        public let executable: String
        /// Its process id, as the bus daemon sees it.
        public let processID: UInt32

        public var description: String {
            "\(executable) --version of org.bluez's owner, pid \(processID)"
        }
    }

    /// How long `bluetoothd --version` may take (it prints and exits at once; real time, since a
    /// child process does not follow an injected clock). 5 s was too short on the VM tier's
    /// emulated guest at load 16–20 (killed); the gateway asks while its central starts.
    public static let timeout: Duration = .seconds(10)

    /// Asks the bus, `/proc` and the executable, in that order.
    static func probe(
        connection: DBusConnection, name: String = BlueZNames.service, timeout: Duration = timeout
    ) async -> Result<Found, BluetoothdVersionError> {
        let pid: UInt32
        do {
            pid = try await connection.connectionUnixProcessID(name)
        } catch {
            return .failure(BluetoothdVersionError(.noProcessID, "the bus gave no process id for \(name): \(error)"))
        }
        let cmdline = "/proc/\(pid)/cmdline"
        guard let bytes = FileManager.default.contents(atPath: cmdline), let argv0 = argumentZero(of: Array(bytes))
        else {
            return .failure(
                BluetoothdVersionError(
                    .processUnreadable,
                    "\(cmdline) cannot be read or is empty (the process is gone, or in another PID namespace than this one)"
                ))
        }
        guard isBluetoothdPath(argv0) else {
            return .failure(
                BluetoothdVersionError(
                    .notBluetoothd, "argv[0] of pid \(pid) is \"\(argv0)\", not an absolute path named bluetoothd"))
        }
        if let problem = untrusted(argv0) {
            return .failure(BluetoothdVersionError(.untrustedExecutable, "\(argv0) \(problem): not run"))
        }
        return await runVersion(argv0, timeout: timeout).flatMap { output in
            guard let version = BluetoothdVersion(parsing: output) else {
                return .failure(
                    BluetoothdVersionError(
                        .versionUnparsable, "\(argv0) --version printed \"\(output.prefix(80))\", not major.minor"))
            }
            return .success(Found(version: version, executable: argv0, processID: pid))
        }
    }

    /// The first NUL-terminated argument of a `/proc/<pid>/cmdline`; nil when it is empty.
    static func argumentZero(of cmdline: [UInt8]) -> String? {
        let first = cmdline.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        guard !first.isEmpty else { return nil }
        return String(decoding: first, as: UTF8.self)
    }

    /// An absolute path whose last component is `bluetoothd`.
    static func isBluetoothdPath(_ path: String) -> Bool {
        path.hasPrefix("/") && path.split(separator: "/").last == "bluetoothd"
    }

    /// Why the file at `path` (symbolic links followed) is not run, nil when it may be: it must be
    /// a regular file owned by root or by this process's user, and not writable by group or others
    /// (any user who can own `org.bluez` on a bus chooses its `argv[0]`).
    static func untrusted(_ path: String) -> String? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved) else {
            return "cannot be read"
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else { return "is not a regular file" }
        let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
        guard owner == 0 || owner == geteuid() else {
            return "is owned by uid \(owner.map { "\($0)" } ?? "?"), neither root nor this user"
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value ?? 0o777
        guard mode & 0o022 == 0 else { return "is writable by group or others (mode \(String(mode, radix: 8)))" }
        return nil
    }

    /// Runs `executable --version` on a thread of its own and gives its standard output; kills it
    /// when it has not exited after `timeout`.
    static func runVersion(_ executable: String, timeout: Duration) async -> Result<String, BluetoothdVersionError> {
        await withCheckedContinuation { continuation in
            // Process.run and the bounded wait block: never on the cooperative pool.
            Thread.detachNewThread {
                continuation.resume(returning: runVersionBlocking(executable, timeout: timeout))
            }
        }
    }

    private static func runVersionBlocking(_ executable: String, timeout: Duration) -> Result<
        String, BluetoothdVersionError
    > {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--version"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            return .failure(
                BluetoothdVersionError(.versionFailed, "\(executable) --version cannot be started: \(error)"))
        }
        // Real time: a bound on a child process, which no injected clock drives.
        guard exited.wait(timeout: .now() + .nanoseconds(Int(timeout.inNanoseconds))) == .success else {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + .seconds(1))
            return .failure(
                BluetoothdVersionError(.versionFailed, "\(executable) --version did not exit within \(timeout)"))
        }
        // It has exited: the pipe holds what it wrote (a few bytes, one write). Not read to end of
        // file, which a process it left behind holding the pipe would never give.
        let data = output.fileHandleForReading.availableData
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            return .failure(
                BluetoothdVersionError(
                    .versionFailed, "\(executable) --version failed (status \(process.terminationStatus))"))
        }
        return .success(String(decoding: data.prefix(256), as: UTF8.self))
    }
}
