import Configuration
import Gateway

/// `blebridge check-config [PATH]`: validates a configuration and prints a summary.
enum CheckConfigCommand: CLICommand {
    static let name = "check-config"
    static let summary = "Validate a configuration file and print a summary"
    static let usage = """
        Usage: blebridge check-config [PATH | -c PATH]

        Validates the configuration at PATH (default ./config.json; - or /dev/stdin reads
        standard input, e.g. a pipe) and prints a one-screen summary of what the gateway will do.
        An invalid configuration is reported on one line naming the file, the key path and what
        is accepted there.

        Options:
          -c, --config PATH   The configuration, as an option instead of the argument

        Exit status: 0 valid, 78 invalid, 66 missing or unreadable, 64 usage error.
        """

    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus {
        let option = try arguments.option("config", short: "c")
        let positional = arguments.positional()
        try arguments.finish()
        if option != nil, positional != nil {
            throw CommandLineError.usage("give the configuration path once (PATH or --config PATH)")
        }
        let path = option ?? positional ?? "config.json"
        let configuration = try loadConfiguration(path: path, dashReadsStandardInput: true)
        StandardStreams.out("\(path): OK\n")
        StandardStreams.out(configuration.summaryLines.map { "  \($0)\n" }.joined())
        for warning in configuration.warnings {
            StandardStreams.out("warning: \(warning)\n")
        }
        // Without a bus, bluetoothd's version is unknown here: what depends on it is a note.
        for note in PassiveScanVersionPolicy.checkConfigNotes(configuration) {
            StandardStreams.out("note: \(note)\n")
        }
        return .success
    }
}
