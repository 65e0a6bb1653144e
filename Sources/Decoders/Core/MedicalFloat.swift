/// An IEEE 11073-20601 number (the SFLOAT and FLOAT types of the Bluetooth SIG health profiles),
/// including its special values.
package enum MedicalFloat: Sendable, Hashable, CustomStringConvertible {
    case value(Double)
    /// Not a Number.
    case nan
    /// Not at this Resolution.
    case nres
    case positiveInfinity
    case negativeInfinity
    /// The reserved special value (0x0801 / 0x00800001).
    case reserved

    /// Decodes a 16-bit SFLOAT: 4-bit signed exponent, 12-bit signed mantissa.
    package init(sfloat raw: UInt16) {
        switch raw {
        case 0x07FF: self = .nan
        case 0x0800: self = .nres
        case 0x07FE: self = .positiveInfinity
        case 0x0802: self = .negativeInfinity
        case 0x0801: self = .reserved
        default:
            let mantissa = Int64(Int16(bitPattern: raw << 4) >> 4)
            let exponent = Int(Int8(bitPattern: UInt8(truncatingIfNeeded: raw >> 8)) >> 4)
            self = .value(Scale.decimal(mantissa, exponent: exponent))
        }
    }

    /// Decodes a 32-bit FLOAT: 8-bit signed exponent, 24-bit signed mantissa.
    package init(float raw: UInt32) {
        switch raw {
        case 0x007F_FFFF: self = .nan
        case 0x0080_0000: self = .nres
        case 0x007F_FFFE: self = .positiveInfinity
        case 0x0080_0002: self = .negativeInfinity
        case 0x0080_0001: self = .reserved
        default:
            let mantissa = Int64(Int32(bitPattern: raw << 8) >> 8)
            let exponent = Int(Int8(bitPattern: UInt8(truncatingIfNeeded: raw >> 24)))
            self = .value(Scale.decimal(mantissa, exponent: exponent))
        }
    }

    /// The number when finite.
    package var doubleValue: Double? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// A finite value as a JSON number; special values as `null` (JSON has no NaN or infinity).
    package var decodedValue: DecodedValue {
        if case .value(let value) = self { return .double(value) }
        return .null
    }

    package var description: String {
        switch self {
        case .value(let value): return "\(value)"
        case .nan: return "NaN"
        case .nres: return "NRes"
        case .positiveInfinity: return "+INFINITY"
        case .negativeInfinity: return "-INFINITY"
        case .reserved: return "reserved"
        }
    }
}
