import Bluetooth
import ByteLayouts
import HomeAssistantTables

extension ByteLayout: ValueDecoder {
    /// ``ByteLayout/validate()`` as a `DecoderError` (`invalid_layout`, the path as its field).
    func checked() throws(DecoderError) {
        do {
            try validate()
        } catch {
            throw DecoderError(.invalidLayout, field: error.path, message: error.message)
        }
    }

    public func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try checked()
        var reader = ByteReader(bytes)
        var output: [DecodedField] = []
        // Raw values of integer fields and bit parts, for the fields' `present_if`.
        var raws: [String: Int64] = [:]
        for field in fields {
            if let condition = field.presentIf, !condition.holds(in: raws) { continue }
            let label = field.name ?? field.type.rawValue
            switch field.type {
            case .skip:
                try reader.skip(field.length ?? 0, label)
            case .bytes:
                let value: [UInt8]
                if let length = field.length {
                    value = try reader.bytes(length, label)
                } else {
                    value = reader.rest()
                }
                output.append(.string(label, Hex.string(value)))
            case .utf8:
                output.append(.string(label, try reader.utf8(count: field.length, label)))
            case .bits:
                let length = field.length ?? 1
                let container = try reader.unsigned(length, bigEndian: field.bigEndian ?? false, label)
                for bit in field.bits ?? [] {
                    let value = container >> UInt64(bit.shift) & ((1 << UInt64(bit.width)) - 1)
                    raws[bit.name] = Int64(value)
                    if bit.hasArithmetic {
                        output.append(Self.part(bit, value, container: container))
                    } else if bit.width == 1 {
                        output.append(.bool(bit.name, value == 1, kind: .binary(bit.deviceClass)))
                    } else {
                        output.append(.int(bit.name, value, unit: bit.unit, kind: Self.kind(bit.deviceClass)))
                    }
                }
            case .sfloat:
                let value = try reader.sfloat(label)
                output.append(number(field, label, value.doubleValue, isInteger: false))
            case .float32LE, .float32BE:
                let value = try reader.float32(bigEndian: field.type.isBigEndian, label)
                output.append(number(field, label, value.isFinite ? Double("\(value)") : nil, isInteger: false))
            default:
                let width = field.type.width ?? 1
                let raw =
                    field.type.isSigned
                    ? try reader.signed(width, bigEndian: field.type.isBigEndian, label)
                    : Int64(try reader.unsigned(width, bigEndian: field.type.isBigEndian, label))
                raws[label] = raw
                output.append(number(field, label, Double(raw), isInteger: true, raw: raw))
            }
        }
        try reader.expectEnd(name)
        return output
    }

    private func number(_ field: Field, _ label: String, _ value: Double?, isInteger: Bool, raw: Int64 = 0)
        -> DecodedField
    {
        let kind = Self.kind(field.deviceClass)
        guard let value else { return DecodedField(name: label, value: .null, unit: field.unit, kind: kind) }
        let scale = field.scale ?? 1
        let offset = field.offset ?? 0
        if isInteger, scale == 1, offset == 0 {
            return .int(label, raw, unit: field.unit, kind: kind)
        }
        return .double(label, Scale.affine(value, scale: scale, offset: offset), unit: field.unit, kind: kind)
    }

    /// A bit field with arithmetic: `(bits / divisor) % modulus`, negated by the sign bit, then
    /// `× scale + offset` (an integer when neither is given).
    static func part(_ bit: BitField, _ bits: UInt64, container: UInt64) -> DecodedField {
        var value = Int64(bits) / Int64(bit.divisor ?? 1)
        if let modulus = bit.modulus { value %= Int64(modulus) }
        if let sign = bit.signBit, container >> UInt64(sign) & 1 == 1 { value = -value }
        let kind = Self.kind(bit.deviceClass)
        guard bit.scale != nil || bit.offset != nil else { return .int(bit.name, value, unit: bit.unit, kind: kind) }
        return .double(
            bit.name, Scale.affine(Double(value), scale: bit.scale ?? 1, offset: bit.offset ?? 0), unit: bit.unit,
            kind: kind)
    }

    /// A sensor with the state class Home Assistant allows for `deviceClass` (`measurement`
    /// where it can, `total_increasing` for an `energy` or `volume` counter).
    static func kind(_ deviceClass: String?) -> FieldKind {
        guard let deviceClass else { return .measurement }
        let stateClass = HomeAssistantTables.defaultStateClass(deviceClass: deviceClass)
        return FieldKind.sensor(deviceClass, stateClass: stateClass.flatMap(FieldKind.StateClass.init(rawValue:)))
    }
}
