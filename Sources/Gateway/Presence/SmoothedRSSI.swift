import Foundation
import Timekeeping

/// An exponentially smoothed RSSI on an injected clock: each sample moves the value towards
/// itself by `1 − e^(−Δt/τ)`, Δt the time since the previous sample and τ ``timeConstant``, so
/// the smoothing is the same whether a device advertises every 100 ms or every 2 s. After a step
/// change the value has covered 63 % of it after τ, 95 % after 3τ. The first sample is the value.
package struct SmoothedRSSI: Sendable, Hashable {
    package let timeConstant: Duration
    /// The smoothed RSSI (dBm); nil before the first sample.
    package private(set) var value: Double?
    /// When the last sample came.
    package private(set) var lastSample: ContinuousClock.Instant?

    package init(timeConstant: Duration) {
        self.timeConstant = timeConstant
    }

    package mutating func add(_ rssi: Int, at now: ContinuousClock.Instant) {
        defer { lastSample = now }
        guard let value, let last = lastSample, timeConstant > .zero else {
            value = Double(rssi)
            return
        }
        let elapsed = max(0, (now - last).inSeconds)
        let weight = 1 - exp(-elapsed / timeConstant.inSeconds)
        self.value = value + weight * (Double(rssi) - value)
    }

    /// The log-distance path loss estimate (metres) of a signal `rssi` from a device whose signal
    /// at 1 m is `reference`: `10^((reference − rssi) / (10 n))`, n the path loss exponent
    /// (2 in free space, 2.5–4 indoors).
    package static func distance(rssi: Double, reference: Double, exponent: Double) -> Double {
        pow(10, (reference - rssi) / (10 * exponent))
    }
}
