import Foundation
import Testing

@testable import Gateway

/// The bound on devices the gateway adds by itself: room is made only from idle devices.
@Suite struct DeviceBoundTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func ago(_ seconds: Double) -> Date { now.addingTimeInterval(-seconds) }

    @Test func belowTheMaximumEveryoneIsAdmitted() {
        let bound = DeviceBound(maximum: 3, idleAge: 600)
        #expect(bound.decide(lastSeen: [:], now: Self.now) == .admit(evicting: []))
        #expect(bound.decide(lastSeen: ["a": Self.ago(1), "b": Self.ago(2)], now: Self.now) == .admit(evicting: []))
    }

    @Test func atTheMaximumTheLeastRecentIdleOneMakesRoom() {
        let bound = DeviceBound(maximum: 2, idleAge: 600)
        let seen = ["a": Self.ago(700), "b": Self.ago(900)]
        #expect(bound.decide(lastSeen: seen, now: Self.now) == .admit(evicting: ["b"]))
        #expect(
            bound.decide(lastSeen: ["a": Self.ago(600), "b": Self.ago(10)], now: Self.now) == .admit(evicting: ["a"]),
            "exactly the idle age is idle")
    }

    @Test func atTheMaximumWithNobodyIdleTheNewcomerIsRefused() {
        let bound = DeviceBound(maximum: 2, idleAge: 600)
        #expect(bound.decide(lastSeen: ["a": Self.ago(599), "b": Self.ago(10)], now: Self.now) == .refuse)
    }

    @Test func aLoweredMaximumNeedsEnoughIdleDevices() {
        let bound = DeviceBound(maximum: 2, idleAge: 60)
        let seen = ["a": Self.ago(100), "b": Self.ago(200), "c": Self.ago(5)]
        #expect(bound.decide(lastSeen: seen, now: Self.now) == .admit(evicting: ["b", "a"]))
        #expect(bound.decide(lastSeen: seen.merging(["a": Self.ago(1)]) { $1 }, now: Self.now) == .refuse)
    }

    @Test func theMaximumIsAtLeastOneAndTheAgeNotNegative() {
        let bound = DeviceBound(maximum: 0, idleAge: -5)
        #expect(bound.maximum == 1)
        #expect(bound.idleAge == 0)
        #expect(bound.decide(lastSeen: ["a": Self.now], now: Self.now) == .admit(evicting: ["a"]))
    }
}
