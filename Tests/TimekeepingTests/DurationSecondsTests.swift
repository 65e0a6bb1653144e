import Testing
import Timekeeping

@Suite struct DurationSecondsTests {
    @Test func secondsKeepTheFraction() {
        #expect(Duration.seconds(2).inSeconds == 2)
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Duration.microseconds(250).inSeconds == 0.000_25)
        #expect(Duration.zero.inSeconds == 0)
    }

    @Test func millisecondsRoundTowardsZero() {
        #expect(Duration.seconds(3).inMilliseconds == 3000)
        #expect(Duration.microseconds(2_999).inMilliseconds == 2)
        #expect(Duration.milliseconds(25).inMilliseconds == 25)
    }

    @Test func microsecondsAndNanosecondsRoundTowardsZero() {
        #expect(Duration.seconds(2).inMicroseconds == 2_000_000)
        #expect(Duration.nanoseconds(2_999).inMicroseconds == 2)
        #expect(Duration.milliseconds(-1500).inMicroseconds == -1_500_000)
        #expect(Duration.seconds(1).inNanoseconds == 1_000_000_000)
        #expect((Duration.nanoseconds(7) + .seconds(3)).inNanoseconds == 3_000_000_007)
        #expect(Duration.nanoseconds(-7).inNanoseconds == -7)
    }

    /// More than 292 years in nanoseconds does not fit an `Int64`: the largest value, not a trap.
    @Test func aDurationBeyondTheRangeIsClamped() {
        #expect(Duration.seconds(Int64.max / 2).inNanoseconds == .max)
        #expect(Duration.seconds(Int64.min / 2).inNanoseconds == .min)
        #expect(Duration.seconds(Int64.max / 2).inMicroseconds == .max)
    }
}
