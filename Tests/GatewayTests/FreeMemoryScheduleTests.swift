import Testing

@testable import Gateway

/// When free memory is given back: after a burst has settled, at most once a minute, never
/// without a burst.
@Suite struct FreeMemoryScheduleTests {
    let start = ContinuousClock.Instant.now

    func at(_ seconds: Double) -> ContinuousClock.Instant {
        start + .milliseconds(Int64(seconds * 1000))
    }

    /// ``FreeMemorySchedule/releaseDue(at:)`` `seconds` after the start (outside `#expect`, which
    /// cannot call a mutating method).
    func due(_ schedule: inout FreeMemorySchedule, _ seconds: Double) -> Bool {
        schedule.releaseDue(at: at(seconds))
    }

    @Test func nothingIsGivenBackWithoutABurst() {
        var schedule = FreeMemorySchedule()
        #expect(!due(&schedule, 0))
        #expect(!due(&schedule, 3600))
    }

    @Test func aBurstIsFollowedByOneReleaseOnceItSettled() {
        var schedule = FreeMemorySchedule()
        schedule.burst(at: at(0))
        #expect(!due(&schedule, 4.9))
        #expect(due(&schedule, 5))
        // Once per burst: the next sweeps leave it alone.
        #expect(!due(&schedule, 10))
        #expect(!due(&schedule, 600))
    }

    @Test func theReleaseWaitsForTheLastEventOfTheBurst() {
        // A power cycle: the adapter back, then twenty reconnections over four seconds.
        var schedule = FreeMemorySchedule()
        for tenth in stride(from: 0, through: 40, by: 2) { schedule.burst(at: at(Double(tenth) / 10)) }
        #expect(!due(&schedule, 5))
        #expect(!due(&schedule, 8.9))
        #expect(due(&schedule, 9))
    }

    @Test func releasesAreAMinuteApartWhateverTheBursts() {
        // A flaky device dropping its link every 8 seconds.
        var schedule = FreeMemorySchedule()
        var releases: [Double] = []
        for second in stride(from: 0.0, to: 300, by: 1) {
            if second.truncatingRemainder(dividingBy: 8) == 0 { schedule.burst(at: at(second)) }
            if second.truncatingRemainder(dividingBy: 5) == 0, schedule.releaseDue(at: at(second)) {
                releases.append(second)
            }
        }
        #expect(releases.first == 5)
        #expect(zip(releases, releases.dropFirst()).allSatisfy { $1 - $0 >= 60 })
        #expect(releases.count == 5, "\(releases)")
    }

    @Test func aBurstDuringTheSpacingIsGivenBackWhenItEnds() {
        var schedule = FreeMemorySchedule()
        schedule.burst(at: at(0))
        #expect(due(&schedule, 5))
        schedule.burst(at: at(20))
        #expect(!due(&schedule, 30))
        #expect(!due(&schedule, 64.9))
        #expect(due(&schedule, 65))
    }
}
