import Foundation
import JSON

extension CodingUserInfoKey {
    /// `Set<String>` of decoder names the loader checks `decoder` keys against (absent: any name).
    static let knownDecoders = CodingUserInfoKey(rawValue: "blebridge.knownDecoders")!
}

extension ObjectReader {
    /// A decoder name; checked against the names the loader was given, when it was given some.
    func decoderName(_ key: String) throws -> String? {
        guard let name = try nonEmptyString(key, expected: "a decoder name") else { return nil }
        if let message = unknownDecoder(name) { throw error(key, .invalidValue, message) }
        return name
    }

    /// A list of distinct decoder names (absent: empty), each checked as ``decoderName(_:)`` checks one.
    func decoderNames(_ key: String) throws -> [String] {
        let names = try distinctStrings(key, expected: "a decoder name")
        for (index, name) in names.enumerated() {
            if let message = unknownDecoder(name) {
                throw ConfigurationError(code: .invalidValue, keyPath: keyPath(key) + "[\(index)]", message: message)
            }
        }
        return names
    }

    /// Why `name` is refused: not among the decoder names the loader was given.
    private func unknownDecoder(_ name: String) -> String? {
        guard let known = userInfo[.knownDecoders] as? Set<String>, !known.contains(name) else { return nil }
        var message = "unknown decoder \"\(name)\""
        if let suggestion = JSONUnknownKey.closest(to: name, in: known.sorted()) {
            message += " (did you mean \"\(suggestion)\"?)"
        }
        return message + "; known decoders: \(known.sorted().joined(separator: ", "))"
    }
}
