import Bluetooth

/// The result of decoding one value: the decoder's name, the fields in order, and the raw bytes.
///
/// When decoding failed, `fields` is empty, `error` says why and which field, and the raw bytes
/// remain available (`raw`, and `raw_hex` in the JSON rendering).
public struct DecodedReading: Sendable, Hashable {
    public var decoder: String
    public var fields: [DecodedField]
    public var raw: [UInt8]
    public var error: DecoderError?

    public init(decoder: String, fields: [DecodedField], raw: [UInt8], error: DecoderError? = nil) {
        self.decoder = decoder
        self.fields = fields
        self.raw = raw
        self.error = error
    }

    public var isSuccess: Bool { error == nil }

    /// The field with this name.
    public subscript(name: String) -> DecodedValue? {
        fields.first { $0.name == name }?.value
    }

    /// The raw bytes as lowercase hex.
    public var rawHex: String { Hex.string(raw) }

    /// The fields as one JSON object. `raw_hex` is added when asked for, and always when decoding
    /// failed (together with `error`).
    public func jsonValue(includeRaw: Bool = false) -> DecodedValue {
        var members = fields
        if includeRaw || error != nil { members.append(.string("raw_hex", rawHex)) }
        if let error { members.append(DecodedField(name: "error", value: error.decodedValue)) }
        return .object(members)
    }

    /// `jsonValue(includeRaw:)` as compact JSON text.
    public func jsonString(includeRaw: Bool = false) -> String {
        jsonValue(includeRaw: includeRaw).jsonString
    }
}
