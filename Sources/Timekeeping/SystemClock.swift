import Foundation

/// The real time: `ContinuousClock` (which keeps counting while the system is suspended) and
/// `Date()`.
public struct SystemClock: BridgeClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }
    public var date: Date { Date() }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    public func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}
