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
}
