/// Severity of a log line, lowest first.
package enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Parses `trace`, `debug`, `info`, `notice`, `warning` (or `warn`), `error`, case-insensitively.
    package init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    package var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// The syslog priority journald records for this level (`journalctl -p`): debug 7 … err 3.
    package var syslogPriority: Int {
        switch self {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        }
    }

    /// The accepted names, for error messages.
    package static let acceptedNames = "trace, debug, info, notice, warning, error"
}
