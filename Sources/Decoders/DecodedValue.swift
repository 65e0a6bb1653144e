/// A decoded field value, ready to become JSON.
public indirect enum DecodedValue: Sendable, Hashable {
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)
    case array([DecodedValue])
    case object([DecodedField])
}

/// A named field with an optional unit (`heart_rate`, 72, `bpm`).
public struct DecodedField: Sendable, Hashable {
    public var name: String
    public var value: DecodedValue
    public var unit: String?

    public init(name: String, value: DecodedValue, unit: String? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
    }
}
