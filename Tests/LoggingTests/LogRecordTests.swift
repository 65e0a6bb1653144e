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

    /// Issue 19, D12: raw CR, ESC and NUL from topics and keys reached the log.
    @Test func controlCharactersAreEscapedEverywhere() {
        let record = LogRecord(
            level: .notice, label: "gateway", message: "command refused\r\nINFO [gateway] forged",
            metadata: [("topic", "blebridge/x\u{1B}[2J\u{0}/set"), ("k\u{7}ey", "a\"b\\c"), ("plain", "ok")])
        let line = record.formatted(colour: false)
        #expect(
            line
                == #"NOTICE [gateway] command refused\r\nINFO [gateway] forged topic="blebridge/x\u{1B}[2J\u{0}/set" "#
                + #"k\u{7}ey="a\"b\\c" plain=ok"#)
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }

    @Test func levelsParseByName() {
        #expect(LogLevel(name: "WARN") == .warning)
        #expect(LogLevel(name: "debug") == .debug)
        #expect(LogLevel(name: "loud") == nil)
        #expect(LogLevel.error > LogLevel.info)
    }
}
