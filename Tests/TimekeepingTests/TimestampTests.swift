import Foundation
import Testing
import Timekeeping

@Suite struct TimestampTests {
    @Test func formatsUTCWithMillisecondsRoundedDown() {
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_795_917_883.123_9)) == "2026-11-29T02:04:43.123Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_795_917_883.999_6)) == "2026-11-29T02:04:43.999Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -0.000_5)) == "1969-12-31T23:59:59.999Z")
    }

    /// The outbox stores a sample time to the microsecond, and the MQTT 5 sample-time property is
    /// formatted from what it stored while the payload's `ts` was formatted before: both must show
    /// the same millisecond for every time, including those a `Double` holds just below a whole
    /// millisecond.
    @Test func aTimeAndTheSameTimeStoredToTheMicrosecondShowTheSameMillisecond() {
        var generator = SystemRandomNumberGenerator()
        for index in 0..<20_000 {
            let whole = 1_795_917_883 + Double(index)
            let fractions = [
                Double(index % 1000) / 1000, Double.random(in: 0..<1, using: &generator),
                Double(index % 1_000_000) / 1_000_000,
            ]
            for fraction in fractions {
                let time = Date(timeIntervalSince1970: whole + fraction)
                let stored = Date(
                    timeIntervalSince1970: Double(Int64((time.timeIntervalSince1970 * 1_000_000).rounded()))
                        / 1_000_000)
                #expect(Timestamp.iso8601(time) == Timestamp.iso8601(stored), "\(time.timeIntervalSince1970)")
            }
        }
    }

    /// A whole millisecond shows as itself (not the one before), even when its `Double` is a hair below.
    @Test func wholeMillisecondsShowAsThemselves() {
        for milliseconds in 0..<1000 {
            let time = Date(timeIntervalSince1970: 1_795_917_883 + Double(milliseconds) / 1000)
            let text = Timestamp.iso8601(time)
            let expected = String(repeating: "0", count: 3 - String(milliseconds).count) + String(milliseconds)
            #expect(text.hasSuffix(".\(expected)Z"), "\(text)")
        }
    }

    @Test func wholeSecondsAndTheCompactForm() {
        #expect(Timestamp.iso8601(unixSeconds: 1_684_093_277) == "2023-05-14T19:41:17Z")
        #expect(Timestamp.iso8601(unixSeconds: 0) == "1970-01-01T00:00:00Z")
        #expect(Timestamp.iso8601(unixSeconds: -1) == "1969-12-31T23:59:59Z")
        #expect(Timestamp.iso8601(unixSeconds: 951_782_400) == "2000-02-29T00:00:00Z")
        #expect(Timestamp.compact(Date(timeIntervalSince1970: 1_795_917_883.999_6)) == "20261129T020443Z")
        #expect(Timestamp.compact(Date(timeIntervalSince1970: -0.000_5)) == "19691231T235959Z")
    }

    /// The calendar arithmetic against Foundation's formatter, over 1601–2399 (leap centuries
    /// 1600, 2000; 1700, 1800, 1900, 2100, 2200, 2300 not leap), days before 1970 included.
    @Test func theCalendarAgreesWithFoundation() {
        let foundation = ISO8601DateFormatter()
        foundation.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let first: Int64 = -11_644_473_600  // 1601-01-01
        let last: Int64 = 13_569_465_600  // 2400-01-01
        var samples = (0..<20_000).map { _ in Int64.random(in: first..<last, using: &generator) }
        // Every 28 February, 29 February and 1 March midnight and last second of the span.
        for year in 1601...2399 {
            var components = DateComponents(year: year, month: 3, day: 1)
            components.timeZone = TimeZone(identifier: "UTC")
            let march = Int64(Calendar(identifier: .gregorian).date(from: components)!.timeIntervalSince1970)
            samples += [march - 86_400 * 2, march - 86_400, march - 1, march]
        }
        for seconds in samples {
            let expected = foundation.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(Timestamp.iso8601(unixSeconds: seconds) == expected, "\(seconds)")
        }
    }

    /// The millisecond form is written digit by digit into one buffer; its date and time agree with
    /// the whole-second form (built from padded strings) and its milliseconds are rounded down,
    /// across years 1 to 9999 and outside them (years of other widths take the string path).
    @Test func theMillisecondFormAgreesWithTheWholeSecondForm() {
        var generator = SystemRandomNumberGenerator()
        let first: Int64 = -62_135_596_800  // 0001-01-01
        let last: Int64 = 253_402_300_800  // 10000-01-01
        var seconds = (0..<20_000).map { _ in Int64.random(in: first..<last, using: &generator) }
        seconds += [first, last - 1, last, 0, -1, 951_782_400]
        for second in seconds {
            let milliseconds = Int64.random(in: 0..<1000, using: &generator)
            let time = Date(timeIntervalSince1970: Double(second) + (Double(milliseconds) + 0.5) / 1000)
            let fraction = String(milliseconds + 1000).dropFirst()
            let expected = Timestamp.iso8601(unixSeconds: second).dropLast() + "." + fraction + "Z"
            #expect(Timestamp.iso8601(time) == expected, "\(second).\(milliseconds)")
        }
    }
}
