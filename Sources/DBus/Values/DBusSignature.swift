/// A validated D-Bus type signature: zero or more complete types (`s`, `a{sv}`, `(oa{sv})`).
public struct DBusSignature: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    package let rawValue: String

    /// Validates `rawValue`; throws `org.freedesktop.DBus.Error.InvalidSignature` otherwise.
    package init(_ rawValue: String) throws(DBusError) {
        guard Self.completeTypeLengths(rawValue) != nil else {
            throw DBusError(.invalidSignature, "invalid D-Bus signature '\(rawValue)'")
        }
        self.rawValue = rawValue
    }

    package init?(validating rawValue: String) {
        guard Self.completeTypeLengths(rawValue) != nil else { return nil }
        self.rawValue = rawValue
    }

    /// A literal must be a valid signature (a programming error otherwise).
    public init(stringLiteral value: String) {
        precondition(Self.completeTypeLengths(value) != nil, "invalid D-Bus signature literal '\(value)'")
        self.rawValue = value
    }

    /// Skips validation: for signatures libdbus already validated or that were built from valid parts.
    init(trusted rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    package static let empty = DBusSignature(trusted: "")

    /// The complete types this signature is made of (`sa{sv}as` → `s`, `a{sv}`, `as`).
    package var completeTypes: [DBusSignature] {
        guard let lengths = Self.completeTypeLengths(rawValue) else { return [] }
        var result: [DBusSignature] = []
        var rest = Substring(rawValue)
        for length in lengths {
            result.append(DBusSignature(trusted: String(rest.prefix(length))))
            rest = rest.dropFirst(length)
        }
        return result
    }

    /// True when the signature is exactly one complete type.
    package var isSingleCompleteType: Bool { Self.completeTypeLengths(rawValue)?.count == 1 }

    /// Lengths (in bytes) of each complete type, or nil when the signature is invalid.
    static func completeTypeLengths(_ signature: String) -> [Int]? {
        let bytes = Array(signature.utf8)
        guard bytes.count <= 255 else { return nil }
        var lengths: [Int] = []
        var index = 0
        while index < bytes.count {
            guard let end = parseCompleteType(bytes, index, arrayDepth: 0, structDepth: 0) else { return nil }
            lengths.append(end - index)
            index = end
        }
        return lengths
    }

    static func isBasicTypeCode(_ code: UInt8) -> Bool {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
            UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "h"),
            UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            return true
        default: return false
        }
    }

    /// Parses one complete type starting at `index`; returns the index after it.
    private static func parseCompleteType(_ bytes: [UInt8], _ index: Int, arrayDepth: Int, structDepth: Int)
        -> Int?
    {
        guard index < bytes.count else { return nil }
        let code = bytes[index]
        if isBasicTypeCode(code) || code == UInt8(ascii: "v") { return index + 1 }
        switch code {
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { return nil }
            let next = index + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "{") {
                // Dictionary entry: a basic key and one complete value type.
                let keyIndex = next + 1
                guard keyIndex < bytes.count, isBasicTypeCode(bytes[keyIndex]) else { return nil }
                guard
                    let valueEnd = parseCompleteType(
                        bytes, keyIndex + 1, arrayDepth: arrayDepth + 1, structDepth: structDepth + 1),
                    valueEnd < bytes.count, bytes[valueEnd] == UInt8(ascii: "}")
                else { return nil }
                return valueEnd + 1
            }
            return parseCompleteType(bytes, next, arrayDepth: arrayDepth + 1, structDepth: structDepth)
        case UInt8(ascii: "("):
            guard structDepth < 32 else { return nil }
            var cursor = index + 1
            var members = 0
            while cursor < bytes.count, bytes[cursor] != UInt8(ascii: ")") {
                guard let end = parseCompleteType(bytes, cursor, arrayDepth: arrayDepth, structDepth: structDepth + 1)
                else { return nil }
                cursor = end
                members += 1
            }
            guard cursor < bytes.count, members > 0 else { return nil }
            return cursor + 1
        default:
            return nil
        }
    }
}
