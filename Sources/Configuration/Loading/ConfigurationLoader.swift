import Foundation

/// Loads `config.json` into a ``BridgeConfiguration`` with `JSONDecoder`.
///
/// Every error is a ``ConfigurationError`` naming the file, the key path and what is accepted;
/// invalid JSON names the line and column; unknown keys are errors.
public struct ConfigurationLoader: Sendable {
    /// Decoder names accepted in `decoder` keys; nil accepts any name (the gateway passes the
    /// names its decoder registry knows).
    public var knownDecoders: Set<String>?

    public init(knownDecoders: Set<String>? = nil) {
        self.knownDecoders = knownDecoders
    }

    /// Reads and validates the file at `path`: a regular file, or a pipe or FIFO (`/dev/stdin`,
    /// `<(…)`), read to its end.
    public func load(path: String) throws(ConfigurationError) -> BridgeConfiguration {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigurationError(
                code: .fileNotFound, file: path,
                message: "no such file; pass the path of your configuration (the repository's config.json is a sample)")
        }
        guard !isDirectory.boolValue else {
            throw ConfigurationError(
                code: .unreadable, file: path, message: "is a directory; pass the path of a JSON file")
        }
        // FileManager.contents(atPath:) refuses pipes; a file handle reads anything to its end.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            throw ConfigurationError(
                code: .unreadable, file: path,
                message: "cannot be read (permission denied?); make it readable by the user blebridge runs as")
        }
        try? handle.close()
        return try decode(data, file: path)
    }

    /// Reads and validates a configuration from standard input (`check-config -`); errors name
    /// the file `-`.
    public func loadStandardInput() throws(ConfigurationError) -> BridgeConfiguration {
        guard let data = try? FileHandle.standardInput.readToEnd() ?? Data() else {
            throw ConfigurationError(code: .unreadable, file: "-", message: "standard input cannot be read")
        }
        return try decode(data, file: "-")
    }

    /// Validates JSON bytes; `file` is used in error messages.
    public func decode(_ data: Data, file: String = "") throws(ConfigurationError) -> BridgeConfiguration {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ConfigurationError(code: .unreadable, file: file, message: "is not UTF-8 text; save it as UTF-8 JSON")
        }
        do {
            try JSONSyntaxChecker.check(bytes)
            let decoder = JSONDecoder()
            if let knownDecoders { decoder.userInfo[.knownDecoders] = knownDecoders }
            return try decoder.decode(BridgeConfiguration.self, from: Data(bytes))
        } catch var error as ConfigurationError {
            error.file = file
            throw error
        } catch let error as DecodingError {
            var translated = ObjectReader.translate(error, expected: "a different value")
            translated.file = file
            throw translated
        } catch {
            throw ConfigurationError(code: .invalidValue, file: file, message: "\(error)")
        }
    }
}
