/// The pauses before retrying a BlueZ call that failed for now (a `GetManagedObjects` or a
/// `StartDiscovery` bluetoothd did not answer or refused): 1, 2, 4, 8, then every 15 s, counting
/// consecutive failures until ``reset()``. Each try may itself take the call's timeout (25 s by
/// default) when bluetoothd does not answer, so the pause stays short.
public struct RetrySchedule: Sendable, Hashable {
    /// The pauses before the first, second, … retry; the last one repeats.
    public static let delays: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(15)]

    /// Consecutive failures since the last success.
    public private(set) var failures = 0

    public init() {}

    /// Records a failure and returns the pause before the next try.
    public mutating func next() -> Duration {
        defer { failures += 1 }
        return Self.delays[min(failures, Self.delays.count - 1)]
    }

    /// The call succeeded: the next failure starts again at the first pause.
    public mutating func reset() { failures = 0 }
}
