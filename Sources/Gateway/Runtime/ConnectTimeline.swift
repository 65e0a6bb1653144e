import Timekeeping

/// Where one connect task spent its time, step by step, for the debug log line that ends it
/// ("connect timeline"): how long BlueZ took to connect and resolve, the gateway's own
/// `GetManagedObjects` and tree walk, a stale-cache recovery, enabling notifications, and the
/// bookkeeping before the device counts as connected. The VM tier reads it to tell the gateway's
/// share of a recovery from bluetoothd's and the emulated peer's (docs/testing.md).
struct ConnectTimeline: Sendable {
    private let start: ContinuousClock.Instant
    private var last: ContinuousClock.Instant
    private(set) var steps: [(name: String, took: Duration)] = []

    init(at start: ContinuousClock.Instant) {
        self.start = start
        self.last = start
    }

    /// Ends the step `name` at `now` (it began where the previous one ended).
    mutating func step(_ name: String, at now: ContinuousClock.Instant) {
        steps.append((name, now - last))
        last = now
    }

    /// The steps so far, `name=1.234s` each, then the total.
    var fields: [(String, String)] {
        steps.map { ($0.name, Self.seconds($0.took)) } + [("total", Self.seconds(last - start))]
    }

    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = Int((duration.inSeconds * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)s"
    }
}
