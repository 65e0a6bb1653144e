import Logging
import Testing

@Suite struct LogThrottleTests {
    @Test func letsOneLineThroughPerIntervalAndCountsTheRest() {
        var throttle = LogThrottle(interval: .seconds(60))
        let start = ContinuousClock.now
        #expect(throttle.admit(at: start) == 0)
        #expect(throttle.admit(at: start + .seconds(1)) == nil)
        #expect(throttle.admit(at: start + .seconds(59)) == nil)
        #expect(throttle.admit(at: start + .seconds(60)) == 2)
        #expect(throttle.admit(at: start + .seconds(61)) == nil)
        #expect(throttle.admit(at: start + .seconds(200)) == 1)
    }
}
