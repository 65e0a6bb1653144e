import JSON

extension ByteLayout {
    /// When a field is in the value at all (`present_if`): decided by the raw value of an earlier
    /// field, as Heart Rate Measurement's flags decide which fields follow. `field` names an earlier
    /// field of an integer type or a part of an earlier `bits` field; its raw value (before
    /// `scale`, `offset` and a part's arithmetic) must have a bit of `mask` set, or equal `equals`
    /// (`true` and `false` are 1 and 0). An absent field takes no bytes and is not published; a
    /// field whose condition names a field that was itself absent is absent too.
    public struct Condition: Sendable, Hashable, Codable {
        package var field: String
        package var mask: Int64?
        package var equals: Int64?

        package init(field: String, mask: Int64? = nil, equals: Int64? = nil) {
            self.field = field
            self.mask = mask
            self.equals = equals
        }

        /// Whether the field is present, given the raw values decoded so far (by name).
        package func holds(in raw: [String: Int64]) -> Bool {
            guard let value = raw[field] else { return false }
            if let mask { return value & mask != 0 }
            return value == equals
        }

        /// The condition in words, for errors: `flags & 0x8 != 0`, `format == 1`.
        package var text: String {
            if let mask { return "\(field) & 0x\(String(mask, radix: 16, uppercase: true)) != 0" }
            return "\(field) == \(equals ?? 0)"
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case field, mask, equals
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            try decoder.rejectUnknownKeys(accepting: CodingKeys.allCases.map(\.rawValue))
            field = try container.decode(String.self, forKey: .field)
            mask = try container.decodeIfPresent(Int64.self, forKey: .mask)
            if let flag = try? container.decodeIfPresent(Bool.self, forKey: .equals) {
                equals = flag ? 1 : 0
            } else {
                equals = try container.decodeIfPresent(Int64.self, forKey: .equals)
            }
        }
    }
}
