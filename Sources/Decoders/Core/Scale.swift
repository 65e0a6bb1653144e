/// Scaling of raw integers into physical values without binary rounding noise
/// (`2506 × 0.01` gives `25.06`, not `25.060000000000002`).
enum Scale {
    /// `value × 10^exponent`, correctly rounded: negative exponents divide by an exact power of ten.
    static func decimal(_ value: Int64, exponent: Int) -> Double {
        var power = 1.0
        for _ in 0..<min(abs(exponent), 308) { power *= 10 }
        return exponent < 0 ? Double(value) / power : Double(value) * power
    }

    /// `value × multiplier × 10^exponent`, e.g. `(raw, 35, -2)` for a 0.35 step.
    static func decimal(_ value: Int64, multiplier: Int64, exponent: Int) -> Double {
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        if overflow { return Double(value) * Double(multiplier) * decimal(1, exponent: exponent) }
        return decimal(product, exponent: exponent)
    }

    /// A value scaled by an arbitrary factor and offset (user layouts), rounded to 12 significant
    /// digits so that `0.1`-style factors print as written.
    static func affine(_ value: Double, scale: Double, offset: Double) -> Double {
        let result = value * scale + offset
        guard result.isFinite, result != 0 else { return result }
        let magnitude = Int((abs(result)).log10Floor)
        let digits = 11 - magnitude
        guard digits > 0, digits < 300 else { return result }
        var power = 1.0
        for _ in 0..<digits { power *= 10 }
        return (result * power).rounded() / power
    }
}

extension Double {
    /// ⌊log10(self)⌋ for positive finite values, computed without Foundation.
    fileprivate var log10Floor: Int {
        var exponent = 0
        var value = self
        while value >= 10 {
            value /= 10
            exponent += 1
        }
        while value < 1 {
            value *= 10
            exponent -= 1
        }
        return exponent
    }
}
