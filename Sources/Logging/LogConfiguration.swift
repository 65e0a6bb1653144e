import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where log lines go: standard error by default, or a closure (tests).
package struct LogSink: Sendable {
    package let write: @Sendable (LogRecord) -> Void

    package init(write: @escaping @Sendable (LogRecord) -> Void) {
        self.write = write
    }

    /// Standard error, one `write(2)` per line so lines from many threads never interleave; each
    /// line starts with the local time (``LogTimestamp``), since nothing else records it there.
    package static func standardError(colour: Bool) -> LogSink {
        LogSink { record in
            writeLine(LogTimestamp.now() + " " + record.formatted(colour: colour))
        }
    }

    /// Standard error connected to journald (a systemd service): each line starts with the
    /// syslog priority, `<4>WARNING [mqtt] …`, which journald strips and records, so
    /// `journalctl -p warning` and the journal's highlighting work.
    package static let journal = LogSink { record in
        writeLine(record.journalLine)
    }

    /// The sink for this process: journald when standard error is the journal stream (no
    /// timestamp: the journal has its own), else standard error with timestamps, and colours when
    /// it is a terminal.
    package static var automatic: LogSink {
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
    package static var standardErrorIsJournal: Bool {
        guard let raw = getenv("JOURNAL_STREAM") else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return String(cString: raw) == "\(status.st_dev):\(status.st_ino)"
    }

    /// True when standard error is a terminal and `NO_COLOR` is not set.
    package static var standardErrorWantsColour: Bool {
        isatty(2) == 1 && getenv("NO_COLOR") == nil
    }
}

/// The process-wide threshold and sink, set once at start-up by the executable.
package final class LogConfiguration: Sendable {
    package static let shared = LogConfiguration()

    private struct State: Sendable {
        var threshold: LogLevel
        var sink: LogSink
        /// Extra receivers of records at or above a level (the gateway's `bridge/logging`).
        var taps: [Int: (minimum: LogLevel, sink: LogSink)] = [:]
        var nextTap = 0
    }
    private let state: Mutex<State>

    init() {
        var level = LogLevel.info
        if let raw = getenv("BLEBRIDGE_LOG"), let parsed = LogLevel(name: String(cString: raw)) {
            level = parsed
        }
        state = Mutex(State(threshold: level, sink: .automatic))
    }

    package var threshold: LogLevel {
        get { state.withLock { $0.threshold } }
        set { state.withLock { $0.threshold = newValue } }
    }

    package var sink: LogSink {
        get { state.withLock { $0.sink } }
        set { state.withLock { $0.sink = newValue } }
    }

    /// Also hands every record at or above `minimum` (and the threshold) to `sink`, after the
    /// main sink; returns the id for ``removeTap(_:)``. A tap must not log itself.
    package func addTap(minimum: LogLevel, _ sink: LogSink) -> Int {
        state.withLock { state in
            state.nextTap += 1
            state.taps[state.nextTap] = (minimum, sink)
            return state.nextTap
        }
    }

    package func removeTap(_ id: Int) {
        _ = state.withLock { $0.taps.removeValue(forKey: id) }
    }

    /// Writes `record` to the sink and the taps that want it.
    func write(_ record: LogRecord) {
        let (sink, taps) = state.withLock { ($0.sink, $0.taps) }
        sink.write(record)
        for (_, tap) in taps where record.level >= tap.minimum { tap.sink.write(record) }
    }
}
