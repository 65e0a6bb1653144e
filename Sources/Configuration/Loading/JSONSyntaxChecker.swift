/// Checks that bytes are one JSON value and, when not, says where: Foundation's `JSONDecoder`
/// on Linux reports only "not valid JSON". Also rejects duplicate object keys, which
/// `JSONDecoder` would resolve silently to one of the values.
struct JSONSyntaxChecker {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var path: [ConfigurationKey] = []
    private static let maximumDepth = 64

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Throws ``ConfigurationError`` with code `invalidJSON` (or `duplicate`) and a line and column.
    static func check(_ bytes: [UInt8]) throws(ConfigurationError) {
        var checker = JSONSyntaxChecker(bytes)
        checker.skipWhitespace()
        guard checker.index < bytes.count else {
            throw checker.failure("the file is empty; expected a JSON object ({ … })")
        }
        try checker.value(depth: 0)
        checker.skipWhitespace()
        if checker.index < bytes.count {
            throw checker.failure("unexpected \(checker.describeCurrent()) after the end of the JSON value")
        }
    }

    private var column: Int {
        // Count characters, not bytes: UTF-8 continuation bytes do not start a character.
        bytes[lineStart..<index].reduce(1) { count, byte in byte & 0xC0 == 0x80 ? count : count + 1 }
    }

    private func failure(_ message: String, code: ConfigurationError.Code = .invalidJSON) -> ConfigurationError {
        ConfigurationError(
            code: code, keyPath: path.isEmpty ? "" : ConfigurationKey.render(path),
            message: code == .invalidJSON ? "invalid JSON: \(message)" : message, line: line, column: column)
    }

    private func describeCurrent() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    private mutating func value(depth: Int) throws(ConfigurationError) {
        guard depth < Self.maximumDepth else { throw failure("nested more than \(Self.maximumDepth) levels deep") }
        guard index < bytes.count else { throw failure("unexpected end of file; expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try object(depth: depth)
        case UInt8(ascii: "["): try array(depth: depth)
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case UInt8(ascii: "/"): throw failure("comments are not allowed in JSON")
        case UInt8(ascii: "'"): throw failure("strings must use double quotes (\"), not single quotes")
        default:
            throw failure(
                "unexpected \(describeCurrent()); expected a value (object, list, string, number, true, false or null)")
        }
    }

    private mutating func object(depth: Int) throws(ConfigurationError) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        var seen: Set<String> = []
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    throw failure("trailing comma before '}'")
                }
                throw failure("unexpected \(describeCurrent()); expected a key in double quotes")
            }
            let keyLine = line
            let keyColumn = column
            let key = try string()
            guard seen.insert(key).inserted else {
                var error = failure("duplicate key \"\(key)\"; each key may appear once in an object", code: .duplicate)
                error.keyPath = ConfigurationKey.render(path + [ConfigurationKey(key)])
                error.line = keyLine
                error.column = keyColumn
                throw error
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("unexpected \(describeCurrent()); expected ':' after the key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            path.append(ConfigurationKey(key))
            try value(depth: depth + 1)
            path.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of file; expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            throw failure("unexpected \(describeCurrent()); expected ',' or '}' (is a comma missing?)")
        }
    }

    private mutating func array(depth: Int) throws(ConfigurationError) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var element = 0
        while true {
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                throw failure("trailing comma before ']'")
            }
            path.append(ConfigurationKey(intValue: element))
            try value(depth: depth + 1)
            path.removeLast()
            element += 1
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of file; expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            throw failure("unexpected \(describeCurrent()); expected ',' or ']' (is a comma missing?)")
        }
    }

    /// Reads a string starting at the opening quote and returns its (unescaped) contents.
    private mutating func string() throws(ConfigurationError) -> String {
        index += 1
        var scalars: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                // A backslash as the last byte: step past it so the loop ends and the string is
                // reported unterminated (a bare `break` left only the switch and looped forever;
                // found by fuzz-configuration).
                guard index + 1 < bytes.count else {
                    index += 1
                    continue
                }
                let escape = bytes[index + 1]
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    scalars.append(escape)
                    index += 2
                case UInt8(ascii: "u"):
                    let hex = bytes[min(index + 2, bytes.count)..<min(index + 6, bytes.count)]
                    guard hex.count == 4, hex.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }) else {
                        throw failure("\\u must be followed by four hex digits")
                    }
                    scalars.append(contentsOf: Array(hex))
                    index += 6
                default:
                    index += 1
                    throw failure("invalid escape \\\(Character(Unicode.Scalar(escape))) in a string")
                }
            case 0x00..<0x20:
                throw failure(
                    byte == UInt8(ascii: "\n")
                        ? "unterminated string (a line break inside a string must be written \\n)"
                        : "control character in a string; write it as an escape such as \\t")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string; expected a closing '\"'")
    }

    private mutating func literal(_ word: String) throws(ConfigurationError) {
        let expected = Array(word.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
            throw failure(
                "unexpected \(describeCurrent()); expected a value (did you mean \(word)? strings need double quotes)")
        }
        index += expected.count
    }

    private mutating func number() throws(ConfigurationError) {
        let start = index
        try numberSyntax()
        // JSONDecoder refuses a number no Swift type holds without saying where ("(top level)").
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        let isInteger = !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if isInteger ? Int64(text) == nil : !(Double(text)?.isFinite ?? false) {
            let end = index
            index = start
            defer { index = end }
            throw failure(
                "\(text) is out of range; expected "
                    + (isInteger ? "an integer from -9223372036854775808 to 9223372036854775807" : "a finite number"),
                code: .invalidValue)
        }
    }

    private mutating func numberSyntax() throws(ConfigurationError) {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        func digitRun(_ checker: inout JSONSyntaxChecker) -> Int {
            let start = checker.index
            while checker.index < checker.bytes.count, digits.contains(checker.bytes[checker.index]) {
                checker.index += 1
            }
            return checker.index - start
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digitRun(&self)
        guard integerDigits > 0 else { throw failure("a number needs digits after '-'") }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            index = integerStart
            throw failure("numbers must not start with 0")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digitRun(&self) > 0 else { throw failure("a number needs digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digitRun(&self) > 0 else { throw failure("a number needs digits in its exponent") }
        }
    }
}
