import Configuration
import Decoders

/// Loads the configuration at `path`, turning a ``ConfigurationError`` into a one-line failure with
/// exit status 66 (missing or unreadable file) or 78 (invalid content). Every command that reads a
/// configuration uses this. Decoder names are checked against the built-in decoders. With
/// `dashReadsStandardInput`, the path `-` reads standard input (only for commands that read it once).
func loadConfiguration(
    path: String, knownDecoders: Set<String>? = DecoderRegistry.standard.knownNames,
    dashReadsStandardInput: Bool = false
) throws -> BridgeConfiguration {
    let loader = ConfigurationLoader(knownDecoders: knownDecoders)
    do {
        if dashReadsStandardInput && path == "-" { return try loader.loadStandardInput() }
        return try loader.load(path: path)
    } catch {
        let status: ExitStatus =
            switch error.code {
            case .fileNotFound, .unreadable: .noInput
            default: .configuration
            }
        throw CommandLineError.failure(error.description, status: status)
    }
}
