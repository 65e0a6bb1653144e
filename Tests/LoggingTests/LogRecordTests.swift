import Testing

@testable import Logging

@Suite struct LogRecordTests {
    @Test func plainLinesHaveNoEscapeCodes() {
        let record = LogRecord(
            level: .warning, label: "mqtt", message: "broker unreachable",
            metadata: [("url", "mqtt://127.0.0.1:1883"), ("reason", "connection refused")])
        #expect(
            record.formatted(colour: false)
                == "WARNING [mqtt] broker unreachable url=mqtt://127.0.0.1:1883 reason=\"connection refused\"")
        #expect(record.formatted(colour: true).contains("\u{1B}["))
    }

    @Test func levelsParseByName() {
        #expect(LogLevel(name: "WARN") == .warning)
        #expect(LogLevel(name: "debug") == .debug)
        #expect(LogLevel(name: "loud") == nil)
        #expect(LogLevel.error > LogLevel.info)
    }
}
