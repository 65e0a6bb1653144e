/// Why a configuration was rejected: the file, the place in it and what is accepted there.
///
/// `description` is the one line to show a user, for example
/// `config.json: devices[2].subscribe[0].interval: "10x" is not a duration; expected a number followed by ms, s, m, h or d, e.g. "500ms", "30s", "10m", "7d"`.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is; `catch` on it.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The file does not exist.
        case fileNotFound
        /// The file exists but cannot be read (permissions, a directory, not UTF-8).
        case unreadable
        /// The text is not JSON; ``ConfigurationError/line`` and ``ConfigurationError/column`` say where.
        case invalidJSON
        /// A key the configuration does not know (usually a typo).
        case unknownKey
        /// A required key is absent.
        case missingKey
        /// The value has the wrong JSON type (a string where a number belongs, …).
        case wrongType
        /// The value has the right type but is not acceptable (a bad duration, UUID, range, …).
        case invalidValue
        /// Two values that must be unique are not (device ids, command names, …).
        case duplicate
        /// Values that are fine alone contradict each other.
        case conflict
    }

    public var code: Code
    /// The configuration file as it was named to the loader (empty when decoding bytes with no file).
    public var file: String
    /// The JSON key path, e.g. `devices[2].subscribe[0].interval`; empty for whole-file problems.
    public var keyPath: String
    /// What is wrong and what is accepted.
    public var message: String
    /// 1-based line and column for ``Code/invalidJSON`` (and for duplicate keys).
    public var line: Int?
    public var column: Int?

    public init(
        code: Code, file: String = "", keyPath: String = "", message: String, line: Int? = nil, column: Int? = nil
    ) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        var place = file.isEmpty ? "configuration" : file
        if let line {
            place += ":\(line)"
            if let column { place += ":\(column)" }
        }
        if !keyPath.isEmpty { place += ": \(keyPath)" }
        return "\(place): \(message)"
    }
}
