import Foundation

/// Any ``BridgeClock`` as one concrete type, for the generic state machines that keep their clock
/// (`BluetoothRetry<C>`).
package struct AnyBridgeClock: BridgeClock {
    package let base: any BridgeClock

    package init(_ base: any BridgeClock) { self.base = base }

    package var now: ContinuousClock.Instant { base.now }
    package var date: Date { base.date }
    package var minimumResolution: Duration { base.minimumResolution }
    package var followsRealTime: Bool { base.followsRealTime }
    package func whenMoved(_ body: @escaping @Sendable () -> Void) { base.whenMoved(body) }

    package func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
