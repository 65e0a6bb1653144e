import Foundation

extension CodingUserInfoKey {
    /// `Set<String>` of decoder names the loader checks `decoder` keys against (absent: any name).
    static let knownDecoders = CodingUserInfoKey(rawValue: "blebridge.knownDecoders")!
}

extension ObjectReader {
    /// A decoder name; checked against the names the loader was given, when it was given some.
    func decoderName(_ key: String) throws -> String? {
        guard let name = try nonEmptyString(key, expected: "a decoder name") else { return nil }
        if let known = userInfo[.knownDecoders] as? Set<String>, !known.contains(name) {
            var message = "unknown decoder \"\(name)\""
            if let suggestion = Self.closest(to: name, in: known.sorted()) {
                message += " (did you mean \"\(suggestion)\"?)"
            }
            message += "; known decoders: \(known.sorted().joined(separator: ", "))"
            throw error(key, .invalidValue, message)
        }
        return name
    }
}
