import Logging
import Synchronization

/// Collects the log records of one label (unique per test) while forwarding everything to
/// the sink that was installed before.
package final class LogCapture: Sendable {
    package let label: String
    private let records = Mutex<[LogRecord]>([])

    package init(label: String) {
        self.label = label
        let previous = LogConfiguration.shared.sink
        LogConfiguration.shared.sink = LogSink { [self] record in
            if record.label == label { self.records.withLock { $0.append(record) } }
            previous.write(record)
        }
    }

    package var logger: Logger { Logger(label: label) }
    package var captured: [LogRecord] { records.withLock { $0 } }
}
