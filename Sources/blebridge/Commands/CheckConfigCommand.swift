import Configuration

/// `blebridge check-config [PATH]`: validates a configuration and prints a summary.
enum CheckConfigCommand: CLICommand {
    static let name = "check-config"
    static let summary = "Validate a configuration file and print a summary"
    static let usage = """
        Usage: blebridge check-config [PATH]

        Validates the configuration at PATH (default ./config.json; --config PATH works too; - or
        /dev/stdin reads standard input, e.g. a pipe) and prints a one-screen summary of what the
        gateway will do. Exits 0 when it is valid, 78 when
        it is not (66 when the file is missing or unreadable), with one line naming the file, the
        key path and what is accepted there.
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
        return .success
    }
}
