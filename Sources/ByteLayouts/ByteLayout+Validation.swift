extension ByteLayout {
    /// Checks the layout itself: names present and unique, lengths where needed, bits inside their
    /// container, open-ended fields last, device classes and units Home Assistant accepts
    /// (``validateHomeAssistant()``). Call it when loading the configuration.
    public func validate() throws(ByteLayoutError) {
        // The conditions of the fields claiming each name: a name may repeat only on fields that
        // exclude each other (`present_if` with distinct `equals` on the same field).
        var names: [String: [Condition?]] = [:]
        // Earlier fields a `present_if` may name: integer fields and parts of `bits` fields.
        var conditionable: Set<String> = []
        var condition: Condition?
        func claim(_ name: String?, _ path: String) throws(ByteLayoutError) {
            guard let name, !name.isEmpty else {
                throw ByteLayoutError(path: path, message: "needs a name")
            }
            if let earlier = names[name] {
                guard let condition, condition.equals != nil,
                    earlier.allSatisfy({ $0?.field == condition.field && $0?.equals != nil && $0 != condition })
                else {
                    throw ByteLayoutError(
                        path: path,
                        message:
                            "duplicate name '\(name)' (a name may repeat only on fields with present_if on the same field and distinct 'equals')"
                    )
                }
            }
            names[name, default: []].append(condition)
        }
        for (index, field) in fields.enumerated() {
            let path = "fields[\(index)]"
            condition = field.presentIf
            if let presentIf = field.presentIf {
                try Self.checkCondition(presentIf, earlier: conditionable, path: path + ".present_if")
            }
            defer {
                if field.type.isInteger, let name = field.name { conditionable.insert(name) }
                for bit in field.bits ?? [] { conditionable.insert(bit.name) }
            }
            if let scale = field.scale, scale == 0 || !scale.isFinite {
                throw ByteLayoutError(path: path + ".scale", message: "must be a non-zero number")
            }
            switch field.type {
            case .skip:
                guard let length = field.length, length > 0 else {
                    throw ByteLayoutError(path: path + ".length", message: "skip needs a positive length")
                }
            case .bits:
                guard let length = field.length, (1...8).contains(length) else {
                    throw ByteLayoutError(path: path + ".length", message: "bits needs a length of 1 to 8 bytes")
                }
                guard let bits = field.bits, !bits.isEmpty else {
                    throw ByteLayoutError(path: path + ".bits", message: "bits needs at least one bit field")
                }
                for (bitIndex, bit) in bits.enumerated() {
                    let bitPath = path + ".bits[\(bitIndex)]"
                    try claim(bit.name, bitPath)
                    guard bit.shift >= 0, bit.width >= 1, bit.shift + bit.width <= length * 8, bit.width <= 63 else {
                        throw ByteLayoutError(
                            path: bitPath,
                            message: "bits \(bit.shift)..<\(bit.shift + bit.width) do not fit in \(length) byte(s)")
                    }
                    try Self.checkArithmetic(bit, bytes: length, path: bitPath)
                }
            case .bytes, .utf8:
                try claim(field.name, path)
                if let length = field.length {
                    guard length >= 0 else {
                        throw ByteLayoutError(path: path + ".length", message: "must not be negative")
                    }
                } else if index != fields.count - 1 {
                    throw ByteLayoutError(path: path + ".length", message: "only the last field may omit its length")
                }
            default:
                try claim(field.name, path)
            }
        }
        try validateHomeAssistant()
    }

    /// A `present_if`: an earlier integer field or bit part, and exactly one of `mask` (≥ 1) and `equals`.
    private static func checkCondition(_ condition: Condition, earlier: Set<String>, path: String)
        throws(ByteLayoutError)
    {
        guard earlier.contains(condition.field) else {
            throw ByteLayoutError(
                path: path + ".field",
                message:
                    "'\(condition.field)' is not an earlier field of an integer type or a part of an earlier bits field"
            )
        }
        switch (condition.mask, condition.equals) {
        case (let mask?, nil):
            guard mask >= 1 else { throw ByteLayoutError(path: path + ".mask", message: "must be at least 1") }
        case (nil, _?): break
        default:
            throw ByteLayoutError(path: path, message: "needs exactly one of 'mask' and 'equals'")
        }
    }

    /// A bit field's `divisor` (≥ 1), `modulus` (≥ 2), `sign_bit` (in the container, outside the
    /// part) and `scale` (non-zero).
    private static func checkArithmetic(_ bit: BitField, bytes: Int, path: String) throws(ByteLayoutError) {
        if let divisor = bit.divisor, divisor < 1 {
            throw ByteLayoutError(path: path + ".divisor", message: "must be at least 1")
        }
        if let modulus = bit.modulus, modulus < 2 {
            throw ByteLayoutError(path: path + ".modulus", message: "must be at least 2")
        }
        if let sign = bit.signBit {
            guard (0..<bytes * 8).contains(sign), !(bit.shift..<bit.shift + bit.width).contains(sign) else {
                throw ByteLayoutError(
                    path: path + ".sign_bit",
                    message:
                        "must be a bit of the \(bytes)-byte container outside bits \(bit.shift)..<\(bit.shift + bit.width)"
                )
            }
        }
        if let scale = bit.scale, scale == 0 || !scale.isFinite {
            throw ByteLayoutError(path: path + ".scale", message: "must be a non-zero number")
        }
    }
}
