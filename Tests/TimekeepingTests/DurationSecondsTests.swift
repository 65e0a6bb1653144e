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
}
