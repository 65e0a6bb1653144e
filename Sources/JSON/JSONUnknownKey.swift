/// An object key the decoding type does not accept. ``Swift/Decoder/rejectUnknownKeys(accepting:)``
/// throws it as the underlying error of a `DecodingError.dataCorrupted` whose coding path ends
/// with the key, so callers tell a typo from any other invalid value by type, not by message.
package struct JSONUnknownKey: Error, Sendable, Equatable, CustomStringConvertible {
    package var key: String
    /// The keys accepted in that object, in the order the type lists them.
    package var accepted: [String]

    package init(key: String, accepted: [String]) {
        self.key = key
        self.accepted = accepted
    }

    /// The accepted key within two edits of `key` (case ignored), if one is.
    package var suggestion: String? { Self.closest(to: key, in: accepted) }

    /// `unknown key "nmae" (did you mean "name"?); accepted keys here: name, address`.
    package var description: String {
        var text = "unknown key \"\(key)\""
        if let suggestion { text += " (did you mean \"\(suggestion)\"?)" }
        return text + "; accepted keys here: " + accepted.joined(separator: ", ")
    }

    /// The candidate within two edits of `word` (case ignored), the nearest first.
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word.lowercased(), $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

extension Decoder {
    /// Throws when the object being decoded holds a key not in `accepted`: a typo in a file must
    /// not be ignored. The error is `DecodingError.dataCorrupted` with the key's full coding path,
    /// the message of ``JSONUnknownKey`` and the ``JSONUnknownKey`` as its underlying error. Keys
    /// are checked in sorted order, so the same file always names the same key first.
    package func rejectUnknownKeys(accepting accepted: [String]) throws {
        let container = try container(keyedBy: JSONKey.self)
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue })
        where !accepted.contains(key.stringValue) {
            let unknown = JSONUnknownKey(key: key.stringValue, accepted: accepted)
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [key], debugDescription: unknown.description, underlyingError: unknown))
        }
    }
}

extension Decoder {
    /// ``rejectUnknownKeys(accepting:)`` with the keys of a `CodingKeys` enum.
    package func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type) throws {
        try rejectUnknownKeys(accepting: keys.allCases.map(\.stringValue))
    }
}
