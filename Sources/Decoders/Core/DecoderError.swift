/// Why a value could not be decoded (or encoded): a catchable `code`, the `field` that failed,
/// the byte `offset` where reading stopped, and a sentence for logs.
public struct DecoderError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The value ended before `field` could be read.
        case truncated
        /// Bytes were left over after the last field the format defines.
        case trailingBytes = "trailing_bytes"
        /// `field` holds a value the format does not allow (reserved code, bad UTF-8, …).
        case invalidValue = "invalid_value"
        /// The payload is a variant this decoder does not handle (another frame type, version, …).
        case unsupported
        /// An encrypted payload arrived without a key (or with a key of the wrong size).
        case missingKey = "missing_key"
        /// Authenticated decryption failed: wrong key, wrong address or tampered data.
        case decryptionFailed = "decryption_failed"
        /// A user-defined layout description is inconsistent.
        case invalidLayout = "invalid_layout"
        /// No decoder is known by the requested name or UUID.
        case unknownDecoder = "unknown_decoder"
        /// A value given to an encoder is missing, of the wrong type or out of range.
        case invalidInput = "invalid_input"
    }

    public var code: Code
    public var field: String
    public var offset: Int?
    public var message: String

    public init(_ code: Code, field: String, offset: Int? = nil, message: String) {
        self.code = code
        self.field = field
        self.offset = offset
        self.message = message
    }

    public var description: String {
        if let offset {
            return "\(code.rawValue) at '\(field)' (byte \(offset)): \(message)"
        }
        return "\(code.rawValue) at '\(field)': \(message)"
    }

    /// The error as a JSON object: `{"code":…,"field":…,"offset":…,"message":…}`.
    public var decodedValue: DecodedValue {
        var fields: [DecodedField] = [
            .string("code", code.rawValue),
            .string("field", field),
        ]
        if let offset { fields.append(.int("offset", offset)) }
        fields.append(.string("message", message))
        return .object(fields)
    }
}
