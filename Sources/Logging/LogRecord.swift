/// One log line before formatting.
public struct LogRecord: Sendable {
    public var level: LogLevel
    public var label: String
    public var message: String
    public var metadata: [(String, String)]

    public init(level: LogLevel, label: String, message: String, metadata: [(String, String)] = []) {
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
    }

    /// `LEVEL [label] message key=value`; values with spaces or quotes are quoted.
    public func formatted(colour: Bool) -> String {
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
        return line + " [\(label)] " + text
    }

    /// The message and its `key=value` pairs, without level or label.
    public var text: String {
        var line = message
        for (key, value) in metadata {
            line += " \(key)=\(Self.quoteIfNeeded(value))"
        }
        return line
    }

    /// The line for journald: `<priority>` then the plain line.
    public var journalLine: String {
        "<\(level.syslogPriority)>" + formatted(colour: false)
    }

    static func quoteIfNeeded(_ value: String) -> String {
        if value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n")
            return "\"\(escaped)\""
        }
        return value
    }
}
