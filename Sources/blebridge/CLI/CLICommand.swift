/// A `blebridge` subcommand: one type per file in `Commands/`, listed in ``CommandRegistry``.
protocol CLICommand: Sendable {
    /// The word typed after `blebridge`, e.g. `check-config`.
    static var name: String { get }
    /// One line for the command list in `blebridge --help`.
    static var summary: String { get }
    /// The full help shown by `blebridge <name> --help` and after a usage error. Starts with
    /// `Usage: blebridge <name> …` and lists the command's own options.
    static var usage: String { get }
    /// Parses `arguments` (global options such as `--log-level` already removed) and runs.
    ///
    /// Throw ``CommandLineError/usage(_:)`` for bad arguments and ``CommandLineError/failure(_:status:)``
    /// for runtime failures; any other error is reported on one line with exit status 1.
    static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus
}
