/// Why ``BluetoothdVersionProbe`` could not tell bluetoothd's version. `code` names the step;
/// `detail` says what was found there.
public struct BluetoothdVersionError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The bus did not give the process id of `org.bluez`'s owner (nobody owns it, or the bus
        /// cannot tell).
        case noProcessID = "no_process_id"
        /// `/proc/<pid>/cmdline` could not be read or was empty: the process is gone, or it is in
        /// another PID namespace (a container) than this one.
        case processUnreadable = "process_unreadable"
        /// Its `argv[0]` is not an absolute path named `bluetoothd` (e.g. the simulator).
        case notBluetoothd = "not_bluetoothd"
        /// The file at that path is not a regular file owned by root (or this user) and writable
        /// by nobody else: it is not run.
        case untrustedExecutable = "untrusted_executable"
        /// `<path> --version` could not be started, failed, or did not exit in time.
        case versionFailed = "version_failed"
        /// `<path> --version` printed something other than `major.minor`.
        case versionUnparsable = "version_unparsable"
    }

    public let code: Code
    public let detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
