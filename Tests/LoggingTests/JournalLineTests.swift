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

/// Lines outside journald start with the local time; durations in lines are rounded.
@Suite struct TimestampAndDurationTests {
    @Test func timestampsAreDateTimeAndMilliseconds() {
        #expect(LogTimestamp.format(seconds: 1_796_148_324, milliseconds: 7, utc: true) == "2026-12-01 18:05:24.007")
        let now = LogTimestamp.now()
        #expect(now.count == 23)
        #expect(now.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$"#, options: .regularExpression) != nil)
    }

    @Test func durationsAreRoundedForPeople() {
        #expect(LogDuration.rounded(.nanoseconds(137_876_626)) == "0.1s")
        #expect(LogDuration.rounded(.milliseconds(20)) == "20ms")
        #expect(LogDuration.rounded(.microseconds(94_400)) == "94ms")
        #expect(LogDuration.rounded(.milliseconds(95)) == "0.1s")
        #expect(LogDuration.rounded(.milliseconds(250)) == "0.3s")
        #expect(LogDuration.rounded(.milliseconds(9_949)) == "9.9s")
        #expect(LogDuration.rounded(.milliseconds(9_960)) == "10s")
        #expect(LogDuration.rounded(.seconds(29.6)) == "30s")
        #expect(LogDuration.rounded(.seconds(245)) == "4m05s")
    }
}
