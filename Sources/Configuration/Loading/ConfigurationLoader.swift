import Foundation
import JSON

/// Loads `config.json` into a ``BridgeConfiguration`` with `JSONDecoder`.
///
/// Every error is a ``ConfigurationError`` naming the file, the key path and what is accepted;
/// invalid JSON names the line and column; unknown keys are errors.
public struct ConfigurationLoader: Sendable {
    /// Decoder names accepted in `decoder` keys; nil accepts any name (the gateway passes the
    /// names its decoder registry knows).
    package var knownDecoders: Set<String>?

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
    package func loadStandardInput() throws(ConfigurationError) -> BridgeConfiguration {
        guard let data = try? FileHandle.standardInput.readToEnd() ?? Data() else {
            throw ConfigurationError(code: .unreadable, file: "-", message: "standard input cannot be read")
        }
        return try decode(data, file: "-")
    }

    /// The byte offset of the first byte that is not valid UTF-8, or nil when all are.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// Validates JSON bytes; `file` is used in error messages.
    public func decode(_ data: Data, file: String = "") throws(ConfigurationError) -> BridgeConfiguration {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        if let offset = Self.firstInvalidUTF8(bytes) {
            let before = bytes[..<offset]
            let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
            let lineStart = (before.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
            // Characters, not bytes, as the JSON checker counts columns.
            let column = bytes[lineStart..<offset].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
            throw ConfigurationError(
                code: .unreadable, file: file,
                message: "is not UTF-8 text: byte 0x\(String(bytes[offset], radix: 16)) at offset \(offset) "
                    + "is not valid UTF-8; save it as UTF-8 JSON",
                line: line, column: column)
        }
        do {
            try Self.checkSyntax(bytes)
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

extension ConfigurationLoader {
    /// Checks that `bytes` are one JSON value through the JSON module's strict parser, which says
    /// where when not (Foundation's `JSONDecoder` on Linux says only "not valid JSON") and refuses
    /// duplicate keys (which `JSONDecoder` resolves silently to one of the values) and integers no
    /// Swift integer holds.
    static func checkSyntax(_ bytes: [UInt8]) throws(ConfigurationError) {
        if bytes.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            throw ConfigurationError(
                code: .invalidJSON, message: "invalid JSON: the file is empty; expected a JSON object ({ … })", line: 1,
                column: 1)
        }
        do {
            _ = try JSONParser.files.parse(bytes)
        } catch {
            let (line, column) = error.location(in: bytes)
            let code: ConfigurationError.Code =
                switch error.kind {
                case .syntax, .tooDeep: .invalidJSON
                case .duplicateKey: .duplicate
                case .numberOutOfRange: .invalidValue
                }
            throw ConfigurationError(
                code: code, keyPath: error.path.isEmpty ? "" : ConfigurationKey.render(error.path),
                message: code == .invalidJSON ? "invalid JSON: \(error.reason)" : error.reason, line: line,
                column: column)
        }
    }
}
