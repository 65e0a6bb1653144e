import Timekeeping

/// One line of the `sd_notify(3)` protocol.
package enum NotifyState: Sendable, Hashable {
    /// `READY=1`: start-up finished (with `Type=notify`, systemd considers the unit started).
    case ready
    /// `RELOADING=1`: reloading the configuration; send `.ready` when done.
    case reloading
    /// `STOPPING=1`: shutting down.
    case stopping
    /// `WATCHDOG=1`: still alive; must come at least every `WatchdogSec`.
    case watchdog
    /// `STATUS=…`: one line shown by `systemctl status`.
    case status(String)
    /// `ERRNO=…`: the failure, as an errno value.
    case errno(Int32)
    /// `MAINPID=…`.
    case mainPID(Int32)
    /// `EXTEND_TIMEOUT_USEC=…`: ask for more time to start or stop.
    case extendTimeout(Duration)

    /// The `KEY=value` line (newlines in a status are replaced by spaces).
    package var line: String {
        switch self {
        case .ready: "READY=1"
        case .reloading: "RELOADING=1"
        case .stopping: "STOPPING=1"
        case .watchdog: "WATCHDOG=1"
        case .status(let text): "STATUS=" + text.replacingNewlines()
        case .errno(let value): "ERRNO=\(value)"
        case .mainPID(let pid): "MAINPID=\(pid)"
        case .extendTimeout(let duration): "EXTEND_TIMEOUT_USEC=\(duration.inMicroseconds)"
        }
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0.isNewline ? " " : $0 })
    }
}
