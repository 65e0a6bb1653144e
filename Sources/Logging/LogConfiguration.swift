import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where log lines go: standard error by default, or a closure (tests).
public struct LogSink: Sendable {
    public let write: @Sendable (LogRecord) -> Void

    public init(write: @escaping @Sendable (LogRecord) -> Void) {
        self.write = write
    }

    /// Standard error, one `write(2)` per line so lines from many threads never interleave.
    public static func standardError(colour: Bool) -> LogSink {
        LogSink { record in
            writeLine(record.formatted(colour: colour))
        }
    }

    /// Standard error connected to journald (a systemd service): each line starts with the
    /// syslog priority, `<4>WARNING [mqtt] …`, which journald strips and records, so
    /// `journalctl -p warning` and the journal's highlighting work.
    public static let journal = LogSink { record in
        writeLine(record.journalLine)
    }

    /// The sink for this process: journald when standard error is the journal stream, else
    /// standard error with colours when it is a terminal.
    public static var automatic: LogSink {
        standardErrorIsJournal ? journal : standardError(colour: standardErrorWantsColour)
    }

    private static func writeLine(_ text: String) {
        var bytes = Array((text + "\n").utf8)
        bytes.withUnsafeMutableBytes { buffer in
            _ = Glibc.write(2, buffer.baseAddress, buffer.count)
        }
    }

    /// True when systemd connected standard error to the journal: `JOURNAL_STREAM` holds the
    /// `device:inode` of that stream and it is still file descriptor 2.
    public static var standardErrorIsJournal: Bool {
        guard let raw = getenv("JOURNAL_STREAM") else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return String(cString: raw) == "\(status.st_dev):\(status.st_ino)"
    }

    /// True when standard error is a terminal and `NO_COLOR` is not set.
    public static var standardErrorWantsColour: Bool {
        isatty(2) == 1 && getenv("NO_COLOR") == nil
    }
}

/// The process-wide threshold and sink, set once at start-up by the executable.
public final class LogConfiguration: Sendable {
    public static let shared = LogConfiguration()

    private struct State: Sendable {
        var threshold: LogLevel
        var sink: LogSink
    }
    private let state: Mutex<State>

    init() {
        var level = LogLevel.info
        if let raw = getenv("BLEBRIDGE_LOG"), let parsed = LogLevel(name: String(cString: raw)) {
            level = parsed
        }
        state = Mutex(State(threshold: level, sink: .automatic))
    }

    public var threshold: LogLevel {
        get { state.withLock { $0.threshold } }
        set { state.withLock { $0.threshold = newValue } }
    }

    public var sink: LogSink {
        get { state.withLock { $0.sink } }
        set { state.withLock { $0.sink = newValue } }
    }
}
