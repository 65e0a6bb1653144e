import JSON

extension JSONValue {
    /// A decoded value as JSON: objects keep their field order; units and kinds are metadata,
    /// not part of the value.
    public init(_ value: DecodedValue) {
        switch value {
        case .null: self = .null
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .bool(let flag): self = .bool(flag)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .object(let fields): self = .object(fields.map { JSONMember($0.name, JSONValue($0.value)) })
        }
    }
}

extension DecodedValue {
    /// A JSON value as a decoded value (object members become fields without unit or kind).
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .int(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(DecodedValue.init))
        case .object(let members):
            self = .object(members.map { DecodedField(name: $0.key, value: DecodedValue($0.value)) })
        }
    }
}
