/// One log line before formatting.
package struct LogRecord: Sendable {
    package var level: LogLevel
    package var label: String
    package var message: String
    package var metadata: [(String, String)]

    package init(level: LogLevel, label: String, message: String, metadata: [(String, String)] = []) {
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
    }

    /// `LEVEL [label] message key=value`; values with spaces or quotes are quoted.
    package func formatted(colour: Bool) -> String {
        var line = ""
        let name = level.description.uppercased()
        if colour {
            let code: String
            switch level {
            case .trace, .debug: code = "2"
            case .info: code = "0"
            case .notice: code = "36"
            case .warning: code = "33"
            case .error: code = "31"
            }
            line += "\u{1B}[\(code)m\(name)\u{1B}[0m"
        } else {
            line += name
        }
        return line + " [\(Self.escapingControls(label))] " + text
    }

    /// The message and its `key=value` pairs, without level or label.
    package var text: String {
        var line = Self.escapingControls(message)
        for (key, value) in metadata {
            line += " \(Self.escapingControls(key))=\(Self.quoteIfNeeded(value))"
        }
        return line
    }

    /// The line for journald: `<priority>` then the plain line.
    package var journalLine: String {
        "<\(level.syslogPriority)>" + formatted(colour: false)
    }

    /// A value as it appears after `key=`: quoted (with `\\` and `\"` escaped) when empty or when it
    /// has a space, a quote, an `=` or a control character; control characters always escaped.
    static func quoteIfNeeded(_ value: String) -> String {
        let quote =
            value.isEmpty
            || value.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || isControl($0) }
        guard quote else { return value }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            default: escaped += escape(scalar)
            }
        }
        return "\"\(escaped)\""
    }

    /// `text` with control characters (C0, DEL, C1, U+2028, U+2029) written as escapes (`\n`, `\r`,
    /// `\t`, `\u{1B}`), so text from outside (topics, keys, device names) cannot forge log lines,
    /// move the cursor or hide itself (issue 19, D12).
    static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return text.unicodeScalars.map(escape).joined()
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        case _ where isControl(scalar): return "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default: return String(scalar)
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029
    }
}
