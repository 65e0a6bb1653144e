import Bluetooth

/// The simulator's seeded generator, so scenarios and tests are reproducible.
package typealias SimulatorRandom = SeededRandomNumberGenerator

extension SeededRandomNumberGenerator {
    /// A value in `range` (uniform).
    mutating func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }
}
