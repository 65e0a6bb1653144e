import JSON

/// A decoded value, shaped like JSON so that any reading renders to JSON without loss of order.
///
/// Objects keep their members in the order the decoder produced them (`object` holds
/// ``DecodedField``s, whose unit and kind are metadata for consumers such as Home Assistant
/// discovery and are not part of the JSON text).
public enum DecodedValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([DecodedValue])
    case object([DecodedField])

    /// Compact JSON text with members in order. Non-finite doubles render as `null`.
    public var jsonString: String { JSONValue(self).serialized }

    /// The number as a `Double` when this is `.int` or `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }
}
