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
            let line = record.formatted(colour: colour) + "\n"
            var bytes = Array(line.utf8)
            bytes.withUnsafeMutableBytes { buffer in
                _ = Glibc.write(2, buffer.baseAddress, buffer.count)
            }
        }
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
        state = Mutex(State(threshold: level, sink: .standardError(colour: LogSink.standardErrorWantsColour)))
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
