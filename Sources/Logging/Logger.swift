import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One small logging facility for every module.
///
/// Lines read well both in a terminal and in journald: `LEVEL [label] message key=value…`.
/// Colours are used only when standard error is a TTY and `NO_COLOR` is unset.
/// The threshold comes from `--log-level` (set through ``LogConfiguration``) or the
/// `BLEBRIDGE_LOG` environment variable.
package struct Logger: Sendable {
    package let label: String

    package init(label: String) {
        self.label = label
    }

    @inlinable
    package func isEnabled(_ level: LogLevel) -> Bool {
        level >= LogConfiguration.shared.threshold
    }

    package func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        metadata: @autoclosure () -> [(String, String)] = []
    ) {
        guard isEnabled(level) else { return }
        LogConfiguration.shared.write(LogRecord(level: level, label: label, message: message(), metadata: metadata()))
    }

    package func trace(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.trace, message(), metadata: metadata())
    }
    package func debug(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.debug, message(), metadata: metadata())
    }
    package func info(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.info, message(), metadata: metadata())
    }
    package func notice(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.notice, message(), metadata: metadata())
    }
    package func warning(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.warning, message(), metadata: metadata())
    }
    package func error(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [(String, String)] = []) {
        log(.error, message(), metadata: metadata())
    }
}
