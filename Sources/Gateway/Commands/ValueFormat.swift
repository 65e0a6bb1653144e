import Bluetooth
import ByteLayouts
import Decoders
import JSON

/// How a command value given in JSON becomes the bytes written to a characteristic, with its
/// bounds. Configured per command (`"format": "uint8", "min": 0, "max": 100`).
package struct ValueFormat: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `true`/`false`, `0`/`1`, `"ON"`/`"OFF"` → one byte 0 or 1.
        case bool
        case uint8, uint16, uint32, int8, int16, int32
        /// Immediate Alert level: `"none"`, `"mild"`, `"high"` or 0–2 → one byte.
        case alertLevel = "alert_level"
        /// A hex string (`"01ff"`) → its bytes.
        case hex
        /// A string → its UTF-8 bytes.
        case utf8
        /// A JSON object of a user-defined layout's fields → the layout's bytes (and back).
        case layout
    }

    package var kind: Kind
    package var minimum: Int64?
    package var maximum: Int64?
    /// For `hex` and `utf8`: most bytes accepted (never more than 512, the ATT limit).
    package var maximumLength: Int?
    /// For `hex` and `utf8`: fewest bytes accepted.
    package var minimumLength: Int
    /// For `layout`: the configured layout.
    package var layout: ByteLayout?

    /// The longest attribute value ATT allows.
    package static let attributeValueLimit = 512

    package init(
        _ kind: Kind, minimum: Int64? = nil, maximum: Int64? = nil, maximumLength: Int? = nil, minimumLength: Int = 0,
        layout: ByteLayout? = nil
    ) {
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.maximumLength = maximumLength
        self.minimumLength = minimumLength
        self.layout = layout
    }

    /// Parses the configuration's format name (`"uint8"`, `"alert_level"`, …).
    package init?(name: String, minimum: Int64? = nil, maximum: Int64? = nil, maximumLength: Int? = nil) {
        guard let kind = Kind(rawValue: name) else { return nil }
        self.init(kind, minimum: minimum, maximum: maximum, maximumLength: maximumLength)
    }

    private var integerRange: (min: Int64, max: Int64, width: Int)? {
        switch kind {
        case .uint8: (0, Int64(UInt8.max), 1)
        case .uint16: (0, Int64(UInt16.max), 2)
        case .uint32: (0, Int64(UInt32.max), 4)
        case .int8: (Int64(Int8.min), Int64(Int8.max), 1)
        case .int16: (Int64(Int16.min), Int64(Int16.max), 2)
        case .int32: (Int64(Int32.min), Int64(Int32.max), 4)
        default: nil
        }
    }

    /// The bytes for `value`, or the reason it is refused (`invalid_value` / `value_too_long`).
    package func encode(_ value: JSONValue) -> Result<[UInt8], CommandFailure> {
        switch kind {
        case .bool:
            switch value {
            case .bool(let flag): return .success([flag ? 1 : 0])
            case .int(0), .int(1): return .success([value == .int(1) ? 1 : 0])
            case .string(let text):
                switch text.lowercased() {
                case "on", "true": return .success([1])
                case "off", "false": return .success([0])
                default: break
                }
            default: break
            }
            return .failure(
                CommandFailure(.invalidValue, "expected true/false, 0/1 or \"ON\"/\"OFF\", got \(value.serialized)"))
        case .alertLevel:
            let levels = ["none": 0, "mild": 1, "high": 2]
            if let text = value.stringValue, let level = levels[text.lowercased()] { return .success([UInt8(level)]) }
            if let number = value.intValue, (0...2).contains(number) { return .success([UInt8(number)]) }
            return .failure(
                CommandFailure(.invalidValue, "expected \"none\", \"mild\" or \"high\", got \(value.serialized)"))
        case .hex:
            guard let text = value.stringValue else {
                return .failure(CommandFailure(.invalidValue, "expected a hex string, got \(value.typeName)"))
            }
            guard let bytes = Self.hexBytes(text) else {
                return .failure(CommandFailure(.invalidValue, "expected an even number of hex digits"))
            }
            return checkLength(bytes)
        case .utf8:
            guard let text = value.stringValue else {
                return .failure(CommandFailure(.invalidValue, "expected a string, got \(value.typeName)"))
            }
            return checkLength(Array(text.utf8))
        case .layout:
            guard let layout else { return .failure(CommandFailure(.internal, "format layout without a layout")) }
            do {
                return checkLength(try layout.encode(json: value))
            } catch {
                return .failure(CommandFailure(.invalidValue, "\(error.field): \(error.message)"))
            }
        case .uint8, .uint16, .uint32, .int8, .int16, .int32:
            guard let range = integerRange else { return .failure(CommandFailure(.internal, "no integer range")) }
            guard let number = value.intValue else {
                return .failure(CommandFailure(.invalidValue, "expected an integer, got \(value.serialized)"))
            }
            let low = max(range.min, minimum ?? range.min)
            let high = min(range.max, maximum ?? range.max)
            guard (low...high).contains(number) else {
                return .failure(CommandFailure(.invalidValue, "\(number) is outside \(low)...\(high)"))
            }
            let bits = UInt64(bitPattern: number)
            return .success((0..<range.width).map { UInt8(truncatingIfNeeded: bits >> UInt64($0 * 8)) })
        }
    }

    /// The JSON value of bytes read from the characteristic (the inverse of `encode`); nil when
    /// the bytes do not fit the format.
    package func decode(_ bytes: [UInt8]) -> JSONValue? {
        switch kind {
        case .bool:
            guard bytes.count == 1 else { return nil }
            return .bool(bytes[0] != 0)
        case .alertLevel:
            guard bytes.count == 1 else { return nil }
            return ["none", "mild", "high"].indices.contains(Int(bytes[0]))
                ? .string(["none", "mild", "high"][Int(bytes[0])]) : .int(Int64(bytes[0]))
        case .hex:
            return .string(bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        case .utf8:
            return String(validating: bytes, as: UTF8.self).map(JSONValue.string)
        case .layout:
            guard let fields = try? layout?.decode(bytes) else { return nil }
            return JSONValue(DecodedValue.object(fields))
        case .uint8, .uint16, .uint32, .int8, .int16, .int32:
            guard let width = integerRange?.width, bytes.count == width else { return nil }
            var value: UInt64 = 0
            for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << UInt64(index * 8) }
            switch kind {
            case .int8: return .int(Int64(Int8(truncatingIfNeeded: value)))
            case .int16: return .int(Int64(Int16(truncatingIfNeeded: value)))
            case .int32: return .int(Int64(Int32(truncatingIfNeeded: value)))
            default: return .int(Int64(value))
            }
        }
    }

    private func checkLength(_ bytes: [UInt8]) -> Result<[UInt8], CommandFailure> {
        let limit = min(maximumLength ?? Self.attributeValueLimit, Self.attributeValueLimit)
        guard bytes.count <= limit else {
            return .failure(CommandFailure(.valueTooLong, "\(bytes.count) bytes, at most \(limit) allowed"))
        }
        guard bytes.count >= minimumLength else {
            return .failure(CommandFailure(.invalidValue, "\(bytes.count) bytes, at least \(minimumLength) required"))
        }
        return .success(bytes)
    }

    /// `"01ff"` → `[0x01, 0xff]`; nil unless an even number of hex digits (see `Hex.bytes`).
    package static func hexBytes(_ text: String) -> [UInt8]? { Hex.bytes(text) }
}
