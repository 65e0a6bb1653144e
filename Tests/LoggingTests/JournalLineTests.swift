import Foundation
import Testing

@testable import Logging

/// Lines for journald carry the syslog priority and no colours.
@Suite struct JournalLineTests {
    @Test func journalLinesStartWithThePriorityAndHaveNoEscapes() {
        let record = LogRecord(level: .warning, label: "mqtt", message: "broker unreachable", metadata: [("try", "3")])
        #expect(record.journalLine == "<4>WARNING [mqtt] broker unreachable try=3")
        #expect(LogRecord(level: .error, label: "a", message: "b").journalLine.hasPrefix("<3>ERROR"))
        #expect(LogRecord(level: .debug, label: "a", message: "b").journalLine.hasPrefix("<7>DEBUG"))
    }

    @Test func prioritiesFollowSyslog() {
        #expect(LogLevel.allCases.map(\.syslogPriority) == [7, 7, 6, 5, 4, 3])
    }

    @Test func standardErrorIsTheJournalOnlyWhenJournalStreamNamesIt() {
        var status = stat()
        #expect(fstat(2, &status) == 0)
        defer { unsetenv("JOURNAL_STREAM") }
        setenv("JOURNAL_STREAM", "\(status.st_dev):\(status.st_ino)", 1)
        #expect(LogSink.standardErrorIsJournal)
        setenv("JOURNAL_STREAM", "\(status.st_dev):\(status.st_ino + 1)", 1)
        #expect(!LogSink.standardErrorIsJournal)
        unsetenv("JOURNAL_STREAM")
        #expect(!LogSink.standardErrorIsJournal)
    }
}
