import Foundation

/// Any ``BridgeClock`` as one concrete type, for the generic state machines that keep their clock
/// (`BluetoothRetry<C>`).
public struct AnyBridgeClock: BridgeClock {
    public let base: any BridgeClock

    public init(_ base: any BridgeClock) { self.base = base }

    public var now: ContinuousClock.Instant { base.now }
    public var date: Date { base.date }
    public var minimumResolution: Duration { base.minimumResolution }
    public var followsRealTime: Bool { base.followsRealTime }
    public func whenMoved(_ body: @escaping @Sendable () -> Void) { base.whenMoved(body) }

    public func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
