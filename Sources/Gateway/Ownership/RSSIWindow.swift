/// The RSSI samples of one device heard by this gateway over the last ``window``, and their
/// mean (the candidacy's `rssi`). Pure; the caller passes the time.
package struct RSSIWindow: Sendable {
    package let window: Duration
    private var samples: [(at: ContinuousClock.Instant, rssi: Int)] = []
    /// The mean when the last sample left the window: a holder's device stops advertising while
    /// connected, and its candidacy keeps the signal it was taken with.
    package private(set) var lastMean: Double?

    /// The most samples kept (the newest).
    package static let capacity = 256

    package init(window: Duration = .seconds(30)) {
        self.window = window
    }

    /// A sample heard at `now`.
    package mutating func add(_ rssi: Int, at now: ContinuousClock.Instant) {
        expire(at: now)
        // Bounded: an advertiser reporting every 20 ms keeps the newest ``capacity`` samples.
        if samples.count >= Self.capacity { samples.removeFirst(samples.count - Self.capacity + 1) }
        samples.append((now, rssi))
        lastMean = Double(samples.reduce(0) { $0 + $1.rssi }) / Double(samples.count)
    }

    /// Drops the samples older than the window (the mean is kept in ``lastMean``).
    package mutating func expire(at now: ContinuousClock.Instant) {
        samples.removeAll { now - $0.at >= window }
    }

    /// Forgets everything (the device was lost).
    package mutating func clear() {
        samples = []
        lastMean = nil
    }

    /// Whether a sample is inside the window (as of the last ``expire(at:)``).
    package var hearing: Bool { !samples.isEmpty }

    /// When the oldest sample leaves the window.
    package var nextExpiry: ContinuousClock.Instant? { samples.first.map { $0.at + window } }
}
