/// A user-defined byte layout for values no built-in decoder knows, declared in the
/// configuration (JSON) and used both to decode and to encode (``ByteLayout/encode(_:)``).
///
/// ```json
/// {"name": "lamp_status", "fields": [
///   {"name": "power", "type": "uint8"},
///   {"name": "temperature", "type": "int16_le", "scale": 0.01, "unit": "°C", "device_class": "temperature"},
///   {"type": "bits", "length": 1, "bits": [{"name": "on", "shift": 0, "width": 1},
///                                          {"name": "mode", "shift": 1, "width": 3}]},
///   {"type": "skip", "length": 2},
///   {"name": "label", "type": "utf8"}]}
/// ```
///
/// `bytes` and `utf8` without `length` take the rest of the value and must come last. Numbers are
/// `raw × scale + offset`. Unknown keys are rejected when decoding the JSON.
///
/// This module holds only the description and its checks (no decoding, no C), so that the
/// `Configuration` module can embed layouts without depending on `Decoders` and libcrypto;
/// `Decoders` adds decoding and encoding.
public struct ByteLayout: Sendable, Hashable, Codable {
    public enum FieldType: String, Sendable, Hashable, Codable, CaseIterable {
        case uint8, int8
        case uint16LE = "uint16_le"
        case uint16BE = "uint16_be"
        case int16LE = "int16_le"
        case int16BE = "int16_be"
        case uint24LE = "uint24_le"
        case uint24BE = "uint24_be"
        case int24LE = "int24_le"
        case int24BE = "int24_be"
        case uint32LE = "uint32_le"
        case uint32BE = "uint32_be"
        case int32LE = "int32_le"
        case int32BE = "int32_be"
        case float32LE = "float32_le"
        case float32BE = "float32_be"
        /// IEEE 11073 16-bit SFLOAT, little-endian.
        case sfloat
        /// Bytes, published as lowercase hex.
        case bytes
        /// UTF-8 text (trailing NULs dropped).
        case utf8
        /// An unsigned little- or big-endian container of `length` bytes split into ``BitField``s.
        case bits
        /// `length` bytes that are ignored (encoded as zeros).
        case skip

        /// Width in bytes of fixed-size integer and float types.
        package var width: Int? {
            switch self {
            case .uint8, .int8: return 1
            case .uint16LE, .uint16BE, .int16LE, .int16BE, .sfloat: return 2
            case .uint24LE, .uint24BE, .int24LE, .int24BE: return 3
            case .uint32LE, .uint32BE, .int32LE, .int32BE, .float32LE, .float32BE: return 4
            case .bytes, .utf8, .bits, .skip: return nil
            }
        }

        package var isSigned: Bool {
            [.int8, .int16LE, .int16BE, .int24LE, .int24BE, .int32LE, .int32BE].contains(self)
        }

        package var isBigEndian: Bool {
            [.uint16BE, .int16BE, .uint24BE, .int24BE, .uint32BE, .int32BE, .float32BE].contains(self)
        }

        package var isInteger: Bool { width != nil && self != .sfloat && self != .float32LE && self != .float32BE }
    }

    /// A group of bits inside a `bits` field: `width` bits starting at bit `shift` (0 = least
    /// significant). One-bit fields decode as booleans unless they have arithmetic.
    ///
    /// Packed decimal values (Govee's 24-bit `temperature × 1000 + humidity` with a sign bit) are
    /// parts of one container: `value = (bits / divisor) % modulus`, negated when the container's
    /// bit `sign_bit` is set, then `× scale + offset`. Parts may overlap (both read bits 0–22).
    public struct BitField: Sendable, Hashable, Codable {
        public var name: String
        public var shift: Int
        public var width: Int
        public var unit: String?
        public var deviceClass: String?
        /// Integer division of the bits before `modulus` (the part above a decimal place).
        public var divisor: Int?
        /// Remainder after `divisor` (the part below a decimal place).
        public var modulus: Int?
        /// A bit of the container (outside this part) that makes the value negative.
        public var signBit: Int?
        public var scale: Double?
        public var offset: Double?

        public init(
            name: String, shift: Int, width: Int = 1, unit: String? = nil, deviceClass: String? = nil,
            divisor: Int? = nil, modulus: Int? = nil, signBit: Int? = nil, scale: Double? = nil, offset: Double? = nil
        ) {
            self.name = name
            self.shift = shift
            self.width = width
            self.unit = unit
            self.deviceClass = deviceClass
            self.divisor = divisor
            self.modulus = modulus
            self.signBit = signBit
            self.scale = scale
            self.offset = offset
        }

        /// True when the part has arithmetic (so a one-bit part is a number, not a boolean).
        package var hasArithmetic: Bool {
            divisor != nil || modulus != nil || signBit != nil || scale != nil || offset != nil
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, shift, width, unit, divisor, modulus, scale, offset
            case deviceClass = "device_class"
            case signBit = "sign_bit"
        }
    }

    public struct Field: Sendable, Hashable, Codable {
        public var name: String?
        public var type: FieldType
        /// Byte count for `bytes`, `utf8`, `bits` (1–8) and `skip`.
        public var length: Int?
        public var scale: Double?
        public var offset: Double?
        public var unit: String?
        /// Home Assistant `device_class` for this field.
        public var deviceClass: String?
        /// Big-endian container for `bits` (default little-endian).
        public var bigEndian: Bool?
        public var bits: [BitField]?
        /// Present only when an earlier field says so (``Condition``); nil: always present.
        public var presentIf: Condition?

        public init(
            name: String?, type: FieldType, length: Int? = nil, scale: Double? = nil, offset: Double? = nil,
            unit: String? = nil, deviceClass: String? = nil, bigEndian: Bool? = nil, bits: [BitField]? = nil,
            presentIf: Condition? = nil
        ) {
            self.name = name
            self.type = type
            self.length = length
            self.scale = scale
            self.offset = offset
            self.unit = unit
            self.deviceClass = deviceClass
            self.bigEndian = bigEndian
            self.bits = bits
            self.presentIf = presentIf
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, type, length, scale, offset, unit, bits
            case deviceClass = "device_class"
            case bigEndian = "big_endian"
            case presentIf = "present_if"
        }
    }

    public var name: String
    public var fields: [Field]

    public init(name: String = "layout", fields: [Field]) {
        self.name = name
        self.fields = fields
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, fields
    }
}
