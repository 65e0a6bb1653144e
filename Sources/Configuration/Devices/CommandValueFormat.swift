/// How a command's JSON value becomes the bytes written to a characteristic (and read back).
/// Integers are little-endian, as GATT sends them.
package enum CommandValueFormat: String, ConfigurationEnum {
    /// `true`/`false` (or `"on"`/`"off"`, 1/0) → one byte 1/0.
    case bool
    case uint8
    case uint16
    case uint32
    case int8
    case int16
    case int32
    /// The Alert Level characteristic: `"none"`, `"mild"`, `"high"` (or 0–2) → one byte.
    case alertLevel = "alert_level"
    /// Raw bytes given as a hex string.
    case hex
    /// A string sent as UTF-8.
    case utf8
    /// A JSON object encoded by the command's user-defined `layout` (and read back through it).
    case layout

    /// The values an integer format can hold; nil for `hex` and `utf8`.
    package var integerRange: ClosedRange<Int>? {
        switch self {
        case .bool: 0...1
        case .uint8: 0...255
        case .uint16: 0...65535
        case .uint32: 0...4_294_967_295
        case .int8: -128...127
        case .int16: -32768...32767
        case .int32: -2_147_483_648...2_147_483_647
        case .alertLevel: 0...2
        case .hex, .utf8, .layout: nil
        }
    }

    /// Encoded size in bytes for fixed-size formats; nil for `hex`, `utf8` and `layout`.
    package var byteCount: Int? {
        switch self {
        case .bool, .uint8, .int8, .alertLevel: 1
        case .uint16, .int16: 2
        case .uint32, .int32: 4
        case .hex, .utf8, .layout: nil
        }
    }

    /// Whether values are byte strings of variable length (`min_length`/`max_length` apply).
    package var isVariableLength: Bool { self == .hex || self == .utf8 }
}
