/// Why a scenario could not be loaded, with the JSON key path of the offending value.
public struct ScenarioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a value callers can `switch` over.
    public enum Code: String, Sendable, Equatable {
        case unknownScenario
        case fileNotFound
        case unreadableFile
        case invalidJSON
        /// An object holds the same key twice.
        case duplicateKey
        case unknownKey
        case missingKey
        case typeMismatch
        case invalidValue
    }

    public var code: Code
    /// Where: a file path or `built-in:NAME`.
    public var source: String
    /// `devices[2].services[0].characteristics[1].uuid`; empty for the whole document.
    public var keyPath: String
    public var message: String

    public init(_ code: Code, source: String = "", keyPath: String = "", message: String) {
        self.code = code
        self.source = source
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        var text = source.isEmpty ? "scenario" : source
        if !keyPath.isEmpty { text += ": at \(keyPath)" }
        return text + ": " + message
    }
}
