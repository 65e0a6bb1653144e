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

    @Test func aBurstPassesWithinOneIntervalThenTheRestAreCounted() {
        var throttle = LogThrottle(interval: .seconds(1), burst: 3)
        let start = ContinuousClock.now
        #expect(throttle.admit(at: start) == 0)
        #expect(throttle.admit(at: start + .milliseconds(100)) == 0)
        #expect(throttle.admit(at: start + .milliseconds(200)) == 0)
        #expect(throttle.admit(at: start + .milliseconds(300)) == nil)
        #expect(throttle.admit(at: start + .milliseconds(999)) == nil)
        #expect(throttle.admit(at: start + .seconds(1)) == 2)
        #expect(throttle.admit(at: start + .milliseconds(1100)) == 0)
    }

    @Test func wouldAdmitAsksWithoutCounting() {
        var throttle = LogThrottle(interval: .seconds(10))
        let start = ContinuousClock.now
        #expect(throttle.wouldAdmit(at: start))
        #expect(throttle.admit(at: start) == 0)
        #expect(!throttle.wouldAdmit(at: start + .seconds(9)))
        #expect(!throttle.wouldAdmit(at: start + .seconds(9)))
        #expect(throttle.wouldAdmit(at: start + .seconds(10)))
        // Asking held nothing back: the next line says none were left out.
        #expect(throttle.admit(at: start + .seconds(10)) == 0)
    }
}
