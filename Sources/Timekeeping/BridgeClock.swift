import Foundation

/// The clock the bridge reads: monotonic instants for timeouts, backoff, silence watchdogs and
/// rate limits, and wall-clock dates for sample timestamps and last-seen times. Production code
/// takes one (``SystemClock``) instead of calling `Date()` or `ContinuousClock.now`, so tests run
/// on a ``ManualClock`` and move time by hand.
///
/// Instants are `ContinuousClock.Instant`s, so values from either clock mix with the state
/// machines that store them.
public protocol BridgeClock: Clock, Sendable where Instant == ContinuousClock.Instant, Duration == Swift.Duration {
    /// Wall-clock time now.
    var date: Date { get }

    /// True when the clock's instants pass with the real time, so a thread may wait for one of its
    /// deadlines with a timed wait (`epoll_wait`'s timeout). False for a ``ManualClock``: its time
    /// moves only when told, and a waiting thread learns it through ``whenMoved(_:)``.
    var followsRealTime: Bool { get }

    /// Calls `body` after each move of a clock that does not follow the real time (on the thread
    /// that moved it, outside any lock), for as long as the clock lives; does nothing on a clock
    /// that follows the real time. An event loop waiting for a timer on this clock is woken so.
    func whenMoved(_ body: @escaping @Sendable () -> Void)
}

extension BridgeClock {
    public var followsRealTime: Bool { true }
    public func whenMoved(_ body: @escaping @Sendable () -> Void) {}
}
