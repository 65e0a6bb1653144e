import Bluetooth
import ByteLayouts
import JSON

extension ByteLayout {
    /// Encodes a JSON object of the layout's fields, as an MQTT `set` command carries it
    /// (`{"power": 1, "temperature": 23.5}`). Members the layout does not name are refused.
    public func encode(json: JSONValue) throws(DecoderError) -> [UInt8] {
        guard let members = json.objectMembers else {
            throw DecoderError(
                .invalidInput, field: name, message: "expects an object of the layout's fields, got \(json.typeName)")
        }
        let known = Set(fields.compactMap(\.name) + fields.flatMap { $0.bits?.map(\.name) ?? [] })
        var values: [String: DecodedValue] = [:]
        for member in members {
            guard known.contains(member.key) else {
                throw DecoderError(
                    .invalidInput, field: member.key,
                    message: "not a field of layout '\(name)'; fields: \(known.sorted().joined(separator: ", "))")
            }
            values[member.key] = DecodedValue(member.value)
        }
        return try encode(values)
    }

    /// The inverse of decoding: builds the bytes from named values (numbers as JSON numbers,
    /// `bytes` as hex text, `utf8` as text, one-bit fields as booleans or 0/1). Numbers are
    /// converted back as `(value − offset) / scale`, rounded, and range-checked for their type.
    public func encode(_ values: [String: DecodedValue]) throws(DecoderError) -> [UInt8] {
        try checked()
        var output: [UInt8] = []
        // Raw values of integer fields and bit parts as encoded, for the fields' `present_if`: a
        // field whose condition does not hold is not written (a value given for it is not used).
        var raws: [String: Int64] = [:]
        for field in fields {
            if let condition = field.presentIf, !condition.holds(in: raws) { continue }
            let label = field.name ?? field.type.rawValue
            switch field.type {
            case .skip:
                output += [UInt8](repeating: 0, count: field.length ?? 0)
            case .bytes:
                guard case .string(let text)? = values[label], let bytes = Hex.bytes(text) else {
                    throw DecoderError(.invalidInput, field: label, message: "expects hex text")
                }
                if let length = field.length, bytes.count != length {
                    throw DecoderError(
                        .invalidInput, field: label, message: "expects \(length) byte(s), got \(bytes.count)")
                }
                output += bytes
            case .utf8:
                guard case .string(let text)? = values[label] else {
                    throw DecoderError(.invalidInput, field: label, message: "expects text")
                }
                var bytes = Array(text.utf8)
                if let length = field.length {
                    guard bytes.count <= length else {
                        throw DecoderError(
                            .invalidInput, field: label, message: "\(bytes.count) bytes do not fit in \(length)")
                    }
                    bytes += [UInt8](repeating: 0, count: length - bytes.count)
                }
                output += bytes
            case .bits:
                let length = field.length ?? 1
                var container: UInt64 = 0
                for bit in field.bits ?? [] where bit.hasArithmetic {
                    container = try Self.add(bit, values[bit.name], to: container)
                }
                for bit in field.bits ?? [] where !bit.hasArithmetic {
                    let value = try Self.integer(values[bit.name], label: bit.name)
                    guard value >= 0, value < Int64(1) << Int64(bit.width) else {
                        throw DecoderError(
                            .invalidInput, field: bit.name, message: "\(value) does not fit in \(bit.width) bit(s)")
                    }
                    container |= UInt64(value) << UInt64(bit.shift)
                }
                for bit in field.bits ?? [] {
                    raws[bit.name] = Int64(container >> UInt64(bit.shift) & ((1 << UInt64(bit.width)) - 1))
                }
                output += Self.bytes(container, width: length, bigEndian: field.bigEndian ?? false)
            case .sfloat:
                let value = try Self.unscaled(values[label], field: field, label: label)
                output += Self.bytes(UInt64(Self.sfloat(value)), width: 2, bigEndian: false)
            case .float32LE, .float32BE:
                let value = try Self.unscaled(values[label], field: field, label: label)
                output += Self.bytes(UInt64(Float(value).bitPattern), width: 4, bigEndian: field.type.isBigEndian)
            default:
                let width = field.type.width ?? 1
                let value = try Self.unscaled(values[label], field: field, label: label).rounded()
                let bitCount = Double(width * 8)
                let range: ClosedRange<Double> =
                    field.type.isSigned
                    ? -Self.power2(bitCount - 1)...(Self.power2(bitCount - 1) - 1)
                    : 0...(Self.power2(bitCount) - 1)
                guard range.contains(value) else {
                    throw DecoderError(
                        .invalidInput, field: label, message: "\(value) is outside \(field.type.rawValue)'s range")
                }
                raws[label] = Int64(value)
                let pattern = UInt64(bitPattern: Int64(value))
                output += Self.bytes(pattern, width: width, bigEndian: field.type.isBigEndian)
            }
        }
        return output
    }

    /// The inverse of ``part(_:_:container:)``: the magnitude, times `divisor`, is added to the
    /// part's bits (parts sharing bits, like Govee's temperature and humidity, add up); a negative
    /// value sets the sign bit. A value the part cannot hold is refused.
    static func add(_ bit: BitField, _ value: DecodedValue?, to container: UInt64) throws(DecoderError) -> UInt64 {
        guard let value else { throw DecoderError(.invalidInput, field: bit.name, message: "missing value") }
        let number: Double
        switch value {
        case .int(let integer): number = Double(integer)
        case .double(let double) where double.isFinite: number = double
        default: throw DecoderError(.invalidInput, field: bit.name, message: "expects a finite number")
        }
        let raw = ((number - (bit.offset ?? 0)) / (bit.scale ?? 1)).rounded()
        let magnitude = abs(raw)
        let limit = Double(bit.modulus ?? Int.max)
        guard raw >= 0 || bit.signBit != nil, magnitude < limit, magnitude < 9e15 else {
            throw DecoderError(.invalidInput, field: bit.name, message: "\(number) does not fit the part")
        }
        let mask: UInt64 = (1 << UInt64(bit.width)) - 1
        let current = container >> UInt64(bit.shift) & mask
        // A divisor near `Int.max` (the layout allows any from 1) times a large value overflows:
        // refused like any other value that does not fit, not a trap.
        let (product, productOverflow) = UInt64(magnitude).multipliedReportingOverflow(by: UInt64(bit.divisor ?? 1))
        let (sum, sumOverflow) = current.addingReportingOverflow(product)
        guard !productOverflow, !sumOverflow, sum <= mask else {
            throw DecoderError(.invalidInput, field: bit.name, message: "\(number) does not fit in \(bit.width) bit(s)")
        }
        var result = container & ~(mask << UInt64(bit.shift)) | sum << UInt64(bit.shift)
        if raw < 0, let sign = bit.signBit { result |= 1 << UInt64(sign) }
        return result
    }

    static func power2(_ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(exponent) { result *= 2 }
        return result
    }

    static func integer(_ value: DecodedValue?, label: String) throws(DecoderError) -> Int64 {
        switch value {
        case .bool(let flag)?: return flag ? 1 : 0
        case .int(let number)?: return number
        case .double(let number)? where number == number.rounded() && abs(number) < 9e18: return Int64(number)
        case nil: throw DecoderError(.invalidInput, field: label, message: "missing value")
        default: throw DecoderError(.invalidInput, field: label, message: "expects an integer or a boolean")
        }
    }

    static func unscaled(_ value: DecodedValue?, field: Field, label: String) throws(DecoderError) -> Double {
        guard let value else { throw DecoderError(.invalidInput, field: label, message: "missing value") }
        let number: Double
        switch value {
        case .int(let integer): number = Double(integer)
        case .double(let double) where double.isFinite: number = double
        case .bool(let flag): number = flag ? 1 : 0
        default: throw DecoderError(.invalidInput, field: label, message: "expects a finite number")
        }
        return (number - (field.offset ?? 0)) / (field.scale ?? 1)
    }

    static func bytes(_ value: UInt64, width: Int, bigEndian: Bool) -> [UInt8] {
        let little = (0..<width).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
        return bigEndian ? little.reversed() : little
    }

    /// The SFLOAT closest to `value`: the smallest exponent whose mantissa fits 12 bits.
    static func sfloat(_ value: Double) -> UInt16 {
        for exponent in -8...7 {
            let mantissa = (value / Scale.decimal(1, exponent: exponent)).rounded()
            if abs(mantissa) <= 2045 {
                let mantissaBits = UInt16(bitPattern: Int16(mantissa)) & 0x0FFF
                let exponentBits = UInt16(bitPattern: Int16(exponent)) & 0x000F
                return exponentBits << 12 | mantissaBits
            }
        }
        return value > 0 ? 0x07FE : 0x0802
    }
}
