extension JSONParser {
    /// One pass over the bytes: reads a value, keeps the key path of where it is for failures.
    struct Cursor {
        let bytes: [UInt8]
        let maximumDepth: Int
        let largeIntegers: LargeIntegers
        var index = 0
        var path: [JSONKey] = []

        init(bytes: [UInt8], maximumDepth: Int, largeIntegers: LargeIntegers) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
            self.largeIntegers = largeIntegers
        }

        var isAtEnd: Bool { index >= bytes.count }

        func failure(_ reason: String, _ kind: Failure.Kind = .syntax, at offset: Int? = nil) -> Failure {
            Failure(kind, offset: offset ?? index, reason: reason, path: path)
        }

        /// The byte at the cursor, for messages: `'x'`, `byte 0xc3` or `end of input`.
        func describeCurrent() -> String {
            guard index < bytes.count else { return "end of input" }
            let byte = bytes[index]
            if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
            return "byte 0x\(String(byte, radix: 16))"
        }

        private func isByte(_ ascii: Unicode.Scalar) -> Bool {
            index < bytes.count && bytes[index] == UInt8(ascii: ascii)
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard index < bytes.count else { throw failure("unexpected end of input; expected a value") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            case UInt8(ascii: "/"): throw failure("comments are not allowed in JSON")
            case UInt8(ascii: "'"): throw failure("strings must use double quotes (\"), not single quotes")
            default:
                throw failure(
                    "unexpected \(describeCurrent()); expected a value (object, list, string, number, true, false or null)"
                )
            }
        }

        private mutating func open(depth: Int) throws(Failure) {
            guard depth < maximumDepth else { throw failure("nested more than \(maximumDepth) levels deep", .tooDeep) }
            index += 1
            skipWhitespace()
        }

        private mutating func object(depth: Int) throws(Failure) -> JSONValue {
            try open(depth: depth)
            var members: [JSONMember] = []
            if isByte("}") {
                index += 1
                return .object(members)
            }
            var seen: Set<KeyBytes> = []
            while true {
                skipWhitespace()
                guard isByte("\"") else {
                    if isByte("}") { throw failure("trailing comma before '}'") }
                    throw failure("unexpected \(describeCurrent()); expected a key in double quotes")
                }
                let keyStart = index
                let key = try string()
                guard seen.insert(KeyBytes(key: key)).inserted else {
                    path.append(JSONKey(key))
                    throw failure(
                        "duplicate key \"\(key)\"; each key may appear once in an object", .duplicateKey, at: keyStart)
                }
                skipWhitespace()
                guard isByte(":") else {
                    throw failure("unexpected \(describeCurrent()); expected ':' after the key \"\(key)\"")
                }
                index += 1
                skipWhitespace()
                path.append(JSONKey(key))
                members.append(JSONMember(key, try value(depth: depth + 1)))
                path.removeLast()
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of input; expected ',' or '}'") }
                if isByte(",") {
                    index += 1
                    continue
                }
                guard isByte("}") else {
                    throw failure("unexpected \(describeCurrent()); expected ',' or '}' (is a comma missing?)")
                }
                index += 1
                return .object(members)
            }
        }

        private mutating func array(depth: Int) throws(Failure) -> JSONValue {
            try open(depth: depth)
            var elements: [JSONValue] = []
            if isByte("]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                if isByte("]") { throw failure("trailing comma before ']'") }
                path.append(JSONKey(intValue: elements.count))
                elements.append(try value(depth: depth + 1))
                path.removeLast()
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of input; expected ',' or ']'") }
                if isByte(",") {
                    index += 1
                    continue
                }
                guard isByte("]") else {
                    throw failure("unexpected \(describeCurrent()); expected ',' or ']' (is a comma missing?)")
                }
                index += 1
                return .array(elements)
            }
        }

        private mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count, bytes[index..<index + expected.count].elementsEqual(expected)
            else {
                throw failure(
                    "unexpected \(describeCurrent()); expected a value (did you mean \(word)? strings need double quotes)"
                )
            }
            index += expected.count
            return value
        }

        /// Reads a string from its opening quote and returns its (unescaped) contents. Built as
        /// UTF-8 bytes, each run between escapes validated once: appending scalar by scalar to a
        /// `String` cost ~0.2 µs a scalar (a 14 KB key 2.7 ms, issue 19).
        private mutating func string() throws(Failure) -> String {
            index += 1
            var text: [UInt8] = []
            var run = index
            /// Appends the raw bytes since `run`, which must be valid UTF-8 (checked where the run ends).
            func flush(_ cursor: Cursor) throws(Failure) {
                guard run < cursor.index else { return }
                let raw = cursor.bytes[run..<cursor.index]
                guard String(validating: raw, as: UTF8.self) != nil else {
                    throw cursor.failure("invalid UTF-8 in a string; save the text as UTF-8")
                }
                text.append(contentsOf: raw)
            }
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    try flush(self)
                    index += 1
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    try flush(self)
                    defer { run = index }
                    guard index + 1 < bytes.count else {
                        index += 1
                        break
                    }
                    let escape = bytes[index + 1]
                    let scalar: Unicode.Scalar
                    switch escape {
                    case UInt8(ascii: "\""): scalar = "\""
                    case UInt8(ascii: "\\"): scalar = "\\"
                    case UInt8(ascii: "/"): scalar = "/"
                    case UInt8(ascii: "b"): scalar = "\u{08}"
                    case UInt8(ascii: "f"): scalar = "\u{0C}"
                    case UInt8(ascii: "n"): scalar = "\n"
                    case UInt8(ascii: "r"): scalar = "\r"
                    case UInt8(ascii: "t"): scalar = "\t"
                    case UInt8(ascii: "u"):
                        index += 2
                        UTF8.encode(try unicodeEscape()) { text.append($0) }
                        continue
                    default:
                        index += 1
                        throw failure("invalid escape \\\(Character(Unicode.Scalar(escape))) in a string")
                    }
                    UTF8.encode(scalar) { text.append($0) }
                    index += 2
                case 0x00..<0x20:
                    throw failure(
                        byte == UInt8(ascii: "\n")
                            ? "unterminated string (a line break inside a string must be written \\n)"
                            : "control character in a string; write it as an escape such as \\t")
                default:
                    index += 1
                }
            }
            throw failure("unterminated string; expected a closing '\"'")
        }

        private static let unpairedHigh =
            "unpaired surrogate in a string; a \\ud800–\\udbff escape needs a low surrogate after it"

        /// The scalar of a `\uXXXX` escape (the cursor after the `u`), joining a surrogate pair.
        private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
            var code = try hex4()
            if (0xD800..<0xDC00).contains(code) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure(Self.unpairedHigh) }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw failure(Self.unpairedHigh) }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else {
                throw failure("unpaired surrogate in a string; a \\udc00–\\udfff escape must follow a high one")
            }
            return scalar
        }

        private mutating func hex4() throws(Failure) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard index < bytes.count, let digit = Self.hexDigit(bytes[index]) else {
                    throw failure("\\u must be followed by four hex digits")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        private static func hexDigit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        private mutating func number() throws(Failure) -> JSONValue {
            let start = index
            if isByte("-") { index += 1 }
            let integerStart = index
            let integerDigits = digitRun()
            guard integerDigits > 0 else { throw failure("a number needs digits after '-'") }
            if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
                index = integerStart
                throw failure("numbers must not start with 0")
            }
            var isInteger = true
            if isByte(".") {
                isInteger = false
                index += 1
                guard digitRun() > 0 else { throw failure("a number needs digits after '.'") }
            }
            if isByte("e") || isByte("E") {
                isInteger = false
                index += 1
                if isByte("+") || isByte("-") { index += 1 }
                guard digitRun() > 0 else { throw failure("a number needs digits in its exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger {
                if let value = Int64(text) { return .int(value) }
                if largeIntegers == .refused {
                    throw failure(
                        "\(text) is out of range; expected an integer from \(Int64.min) to \(Int64.max)",
                        .numberOutOfRange, at: start)
                }
            }
            // Beyond Double's range (`1e400`) the value would be infinite, which JSON cannot write
            // back (it serialises as `null`): refused, with where the number starts.
            guard let value = Double(text), value.isFinite else {
                throw failure("\(text) is out of range; expected a finite number", .numberOutOfRange, at: start)
            }
            return .double(value)
        }

        private mutating func digitRun() -> Int {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - start
        }

        /// An object key as the duplicate check compares it: byte for byte (``Swift/String/utf8Equals(_:)``),
        /// hashed as bytes (a `Set<String>` normalizes every non-ASCII key to hash it).
        struct KeyBytes: Hashable {
            let key: String

            static func == (lhs: KeyBytes, rhs: KeyBytes) -> Bool { lhs.key.utf8Equals(rhs.key) }

            func hash(into hasher: inout Hasher) {
                var key = key
                key.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }
    }
}
