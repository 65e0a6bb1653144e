import Bluetooth
import Foundation
import JSON
import Timekeeping

/// An enum spelled in the configuration by its raw value (`"keep_connected"`, `"notify"`, …).
package protocol ConfigurationEnum: RawRepresentable, CaseIterable, Sendable, Hashable where RawValue == String {}

extension ConfigurationEnum {
    /// `"a", "b" or "c"`, for error messages.
    static var acceptedValues: String {
        let names = allCases.map { "\"\($0.rawValue)\"" }
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

/// Reads one JSON object of the configuration inside `init(from:)`: rejects unknown keys, reads
/// typed values with `null` meaning "absent", and makes every error carry the key path and what
/// is accepted.
struct ObjectReader {
    let container: KeyedDecodingContainer<ConfigurationKey>
    let path: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    /// Opens the object at `decoder` and rejects every key not in `keys`.
    init(_ decoder: any Decoder, keys: [String], what: String = "an object") throws {
        path = decoder.codingPath
        userInfo = decoder.userInfo
        do {
            container = try decoder.container(keyedBy: ConfigurationKey.self)
        } catch DecodingError.typeMismatch {
            throw ConfigurationError(
                code: .wrongType, keyPath: ConfigurationKey.render(path),
                message: "expected \(what) ({ … }), found \(Self.jsonKind(decoder))")
        }
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue })
        where !keys.contains(key.stringValue) {
            throw ConfigurationError(
                code: .unknownKey, keyPath: ConfigurationKey.render(path + [key]),
                message: JSONUnknownKey(key: key.stringValue, accepted: keys).description)
        }
    }

    /// The key path of `key` inside this object.
    func keyPath(_ key: String) -> String {
        ConfigurationKey.render(path + [ConfigurationKey(key)])
    }

    /// An error at `key`.
    func error(_ key: String, _ code: ConfigurationError.Code, _ message: String) -> ConfigurationError {
        ConfigurationError(code: code, keyPath: keyPath(key), message: message)
    }

    /// An error at this object itself.
    func error(_ code: ConfigurationError.Code, _ message: String) -> ConfigurationError {
        ConfigurationError(code: code, keyPath: ConfigurationKey.render(path), message: message)
    }

    func contains(_ key: String) -> Bool {
        guard container.contains(ConfigurationKey(key)) else { return false }
        return (try? container.decodeNil(forKey: ConfigurationKey(key))) == false
    }

    /// Throws a `missingKey` error unless `value` is present.
    func required<Value>(_ value: Value?, _ key: String, accepted: String) throws -> Value {
        guard let value else {
            throw error(key, .missingKey, "required key is missing; expected \(accepted)")
        }
        return value
    }

    // MARK: Typed values

    /// Decodes `Value` at `key` (nil when absent or null); a wrong JSON type names `expected`, or
    /// `elementExpected` when the problem is an element of a list.
    func decode<Value: Decodable>(
        _ type: Value.Type, _ key: String, expected: String, elementExpected: String? = nil
    ) throws -> Value? {
        do {
            return try container.decodeIfPresent(type, forKey: ConfigurationKey(key))
        } catch let error as DecodingError {
            let isElement = Self.codingPath(of: error).count > path.count + 1
            throw Self.translate(error, expected: isElement ? (elementExpected ?? expected) : expected)
        }
    }

    private static func codingPath(of error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath
        case .keyNotFound(_, let context):
            return context.codingPath
        @unknown default:
            return []
        }
    }

    func string(_ key: String, expected: String = "a string") throws -> String? {
        try decode(String.self, key, expected: expected)
    }

    /// A non-empty string.
    func nonEmptyString(_ key: String, expected: String = "a non-empty string") throws -> String? {
        guard let value = try string(key, expected: expected) else { return nil }
        guard !value.isEmpty else { throw error(key, .invalidValue, "must not be empty; expected \(expected)") }
        return value
    }

    func bool(_ key: String) throws -> Bool? {
        try decode(Bool.self, key, expected: "true or false")
    }

    /// An integer in `range` (JSON numbers with a fraction are rejected).
    func integer(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        let expected = "an integer from \(range.lowerBound) to \(range.upperBound)"
        guard let number = try decode(Double.self, key, expected: expected) else { return nil }
        guard number.rounded() == number, let value = Int(exactly: number) else {
            throw error(key, .wrongType, "\(Self.format(number)) is not an integer; expected \(expected)")
        }
        guard range.contains(value) else {
            throw error(key, .invalidValue, "\(value) is out of range; expected \(expected)")
        }
        return value
    }

    /// A number in `range` (a fraction allowed).
    func number(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        let expected = "a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
        guard let number = try decode(Double.self, key, expected: expected) else { return nil }
        guard range.contains(number) else {
            throw error(key, .invalidValue, "\(Self.format(number)) is out of range; expected \(expected)")
        }
        return number
    }

    /// A duration such as `"30s"`, at least `minimum` and at most `maximum` when given.
    func duration(_ key: String, minimum: Duration? = nil, maximum: Duration? = nil) throws -> Duration? {
        let expected = "a duration string: \(DurationParser.acceptedForms)"
        guard let text = try string(key, expected: expected) else { return nil }
        guard let value = DurationParser.parse(text) else {
            throw error(key, .invalidValue, "\"\(text)\" is not a duration; expected \(DurationParser.acceptedForms)")
        }
        if let minimum, value < minimum {
            throw error(
                key, .invalidValue, "\"\(text)\" is too short; the minimum is \(DurationParser.format(minimum))")
        }
        if let maximum, value > maximum {
            throw error(key, .invalidValue, "\"\(text)\" is too long; the maximum is \(DurationParser.format(maximum))")
        }
        return value
    }

    func enumeration<Value: ConfigurationEnum>(_ type: Value.Type, _ key: String) throws -> Value? {
        guard let text = try string(key, expected: Value.acceptedValues) else { return nil }
        guard let value = Value(rawValue: text) else {
            throw error(key, .invalidValue, "\"\(text)\" is not accepted; expected \(Value.acceptedValues)")
        }
        return value
    }

    /// A non-empty list of distinct enum values.
    func enumerations<Value: ConfigurationEnum>(_ type: Value.Type, _ key: String) throws -> [Value]? {
        let expected = "a list of \(Value.acceptedValues)"
        guard let texts = try decode([String].self, key, expected: expected, elementExpected: Value.acceptedValues)
        else { return nil }
        guard !texts.isEmpty else { throw error(key, .invalidValue, "must not be empty; expected \(expected)") }
        var values: [Value] = []
        for (index, text) in texts.enumerated() {
            guard let value = Value(rawValue: text) else {
                throw ConfigurationError(
                    code: .invalidValue, keyPath: keyPath(key) + "[\(index)]",
                    message: "\"\(text)\" is not accepted; expected \(Value.acceptedValues)")
            }
            guard !values.contains(value) else {
                throw ConfigurationError(
                    code: .duplicate, keyPath: keyPath(key) + "[\(index)]", message: "\"\(text)\" is listed twice")
            }
            values.append(value)
        }
        return values
    }

    /// A characteristic or service UUID, or a known name from ``AssignedNumbers``.
    func uuid(_ key: String, kind: UUIDKind) throws -> BluetoothUUID? {
        guard let text = try string(key, expected: kind.accepted) else { return nil }
        return try Self.parseUUID(text, kind: kind, keyPath: keyPath(key))
    }

    /// A list of service or characteristic UUIDs or names.
    func uuids(_ key: String, kind: UUIDKind) throws -> [BluetoothUUID]? {
        guard
            let texts = try decode(
                [String].self, key, expected: "a list of \(kind.accepted)", elementExpected: kind.accepted)
        else { return nil }
        return try texts.enumerated().map { index, text in
            try Self.parseUUID(text, kind: kind, keyPath: keyPath(key) + "[\(index)]")
        }
    }

    /// An object decoded by its own `init(from:)` (which uses its own `ObjectReader`).
    func object<Value: Decodable>(_ type: Value.Type, _ key: String) throws -> Value? {
        try decode(type, key, expected: "an object ({ … })")
    }

    /// A list of objects.
    func objects<Value: Decodable>(_ type: Value.Type, _ key: String) throws -> [Value]? {
        try decode([Value].self, key, expected: "a list of objects ([{ … }])", elementExpected: "an object ({ … })")
    }

    // MARK: Helpers

    enum UUIDKind {
        case service, characteristic

        var accepted: String {
            switch self {
            case .service:
                "a service UUID (\"180d\", \"0000180d-0000-1000-8000-00805f9b34fb\") or a known service name such as \"heart_rate\""
            case .characteristic:
                "a characteristic UUID (\"2a37\", or the full 128-bit form) or a known characteristic name such as \"heart_rate_measurement\""
            }
        }
    }

    static func parseUUID(_ text: String, kind: UUIDKind, keyPath: String) throws -> BluetoothUUID {
        let named: BluetoothUUID? =
            switch kind {
            case .service: AssignedNumbers.service(named: text)
            case .characteristic: AssignedNumbers.characteristic(named: text)
            }
        if let named { return named }
        if let uuid = BluetoothUUID(text) { return uuid }
        throw ConfigurationError(
            code: .invalidValue, keyPath: keyPath,
            message: "\"\(text)\" is not a UUID or a known name; expected \(kind.accepted)")
    }

    /// Turns a `DecodingError` from JSONDecoder into a key-path error that says what is accepted.
    static func translate(_ error: DecodingError, expected: String) -> ConfigurationError {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return ConfigurationError(
                code: .wrongType, keyPath: ConfigurationKey.render(context.codingPath),
                message: "expected \(expected)\(foundSuffix(context.debugDescription))")
        case .keyNotFound(let key, let context):
            return ConfigurationError(
                code: .missingKey, keyPath: ConfigurationKey.render(context.codingPath + [key]),
                message: "required key is missing")
        case .dataCorrupted(let context):
            return ConfigurationError(
                code: .wrongType, keyPath: ConfigurationKey.render(context.codingPath),
                message: "expected \(expected)")
        @unknown default:
            return ConfigurationError(code: .invalidValue, message: "\(error)")
        }
    }

    /// `, found a number` from Foundation's "Expected to decode String but found number instead."
    private static func foundSuffix(_ description: String) -> String {
        guard let range = description.range(of: "but found ") else { return "" }
        var found = description[range.upperBound...]
        if let end = found.range(of: " instead") { found = found[..<end.lowerBound] }
        let text = found.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return "" }
        switch text {
        case "a dictionary", "dictionary": return ", found an object"
        case "a number", "number": return ", found a number"
        case "a string", "string": return ", found a string"
        case "bool", "a bool", "boolean": return ", found true/false"
        case "an array", "array": return ", found a list"
        case "null", "a null value": return ", found null"
        default: return ", found \(text)"
        }
    }

    private static func jsonKind(_ decoder: any Decoder) -> String {
        guard let single = try? decoder.singleValueContainer() else { return "something else" }
        if single.decodeNil() { return "null" }
        if (try? single.decode(Bool.self)) != nil { return "true/false" }
        if (try? single.decode(Double.self)) != nil { return "a number" }
        if (try? single.decode(String.self)) != nil { return "a string" }
        return "a list"
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
