import Foundation
import TaskPool

/// The real time: `ContinuousClock` (which keeps counting while the system is suspended) and
/// `Date()`. Sleeps on `TaskPool`'s timer thread when the pool is installed (the `blebridge`
/// executable), so that the task resumes on the pool's threads, not libdispatch's.
public struct SystemClock: BridgeClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }
    public var date: Date { Date() }
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    public func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        if TaskPool.isInstalled {
            try await TaskPool.sleep(until: deadline)
        } else {
            try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
        }
    }
}
