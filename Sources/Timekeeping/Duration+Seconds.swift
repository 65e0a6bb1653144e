extension Duration {
    /// The duration in seconds, with its fraction (for rates, ages in seconds and `Date`
    /// arithmetic).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole milliseconds, rounded towards zero (for C APIs that take them).
    public var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
