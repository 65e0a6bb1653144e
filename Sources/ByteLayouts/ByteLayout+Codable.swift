import JSON

// Strict JSON decoding: unknown keys are errors (a typo must not silently drop a field).

extension ByteLayout {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try decoder.rejectUnknownKeys(accepting: CodingKeys.allCases.map(\.rawValue))
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? "layout"
        fields = try container.decode([Field].self, forKey: .fields)
    }
}

extension ByteLayout.Field {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try decoder.rejectUnknownKeys(accepting: CodingKeys.allCases.map(\.rawValue))
        name = try container.decodeIfPresent(String.self, forKey: .name)
        type = try container.decode(ByteLayout.FieldType.self, forKey: .type)
        length = try container.decodeIfPresent(Int.self, forKey: .length)
        scale = try container.decodeIfPresent(Double.self, forKey: .scale)
        offset = try container.decodeIfPresent(Double.self, forKey: .offset)
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        deviceClass = try container.decodeIfPresent(String.self, forKey: .deviceClass)
        bigEndian = try container.decodeIfPresent(Bool.self, forKey: .bigEndian)
        bits = try container.decodeIfPresent([ByteLayout.BitField].self, forKey: .bits)
        presentIf = try container.decodeIfPresent(ByteLayout.Condition.self, forKey: .presentIf)
    }
}

extension ByteLayout.BitField {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try decoder.rejectUnknownKeys(accepting: CodingKeys.allCases.map(\.rawValue))
        name = try container.decode(String.self, forKey: .name)
        shift = try container.decode(Int.self, forKey: .shift)
        width = try container.decodeIfPresent(Int.self, forKey: .width) ?? 1
        unit = try container.decodeIfPresent(String.self, forKey: .unit)
        deviceClass = try container.decodeIfPresent(String.self, forKey: .deviceClass)
        divisor = try container.decodeIfPresent(Int.self, forKey: .divisor)
        modulus = try container.decodeIfPresent(Int.self, forKey: .modulus)
        signBit = try container.decodeIfPresent(Int.self, forKey: .signBit)
        scale = try container.decodeIfPresent(Double.self, forKey: .scale)
        offset = try container.decodeIfPresent(Double.self, forKey: .offset)
    }
}

extension ByteLayout.FieldType {
    /// A type name the layout does not know is an error that lists the accepted names.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let type = Self(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "unknown type \"\(text)\"; accepted: \(Self.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        self = type
    }
}
