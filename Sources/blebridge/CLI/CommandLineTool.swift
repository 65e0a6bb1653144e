import Gateway
import Logging

/// Parses the global options, picks the subcommand from ``CommandRegistry`` and runs it,
/// turning every error into one line on standard error and an exit status.
enum CommandLineTool {
    static let globalOptions = """
        Global options:
          -h, --help            Show help (`blebridge <command> --help` for a command's own)
          --version             Show the version
          --log-level LEVEL     trace, debug, info, notice, warning or error (default info;
                                the BLEBRIDGE_LOG environment variable sets the same)
        """

    /// The top-level help: every registered command with its summary.
    static var usage: String {
        let width = max(12, CommandRegistry.commands.map { $0.name.count }.max() ?? 0) + 2
        let lines = CommandRegistry.commands.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count) + command.summary
        }
        return """
            Usage: blebridge [--log-level LEVEL] <command> [options]

            BLEBridge \(BLEBridgeVersion.string): a Bluetooth Low Energy to MQTT gateway.

            Commands:
            \(lines.joined(separator: "\n"))
              help <command>  Show a command's help

            \(globalOptions)
            """
    }

    static func main(arguments: [String]) async -> ExitStatus {
        var arguments = arguments
        // Global options may come before or after the command name (not after `--`).
        do {
            try applyLogLevel(&arguments)
        } catch {
            return report(error, command: nil)
        }
        warnAboutInvalidEnvironmentLogLevel()

        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let commandIndex = arguments[..<end].firstIndex { !$0.hasPrefix("-") }
        let leading = arguments[..<(commandIndex ?? end)]
        if leading.contains("--version") {
            StandardStreams.out("blebridge \(BLEBridgeVersion.string)\n")
            return .success
        }
        if leading.contains("--help") || leading.contains("-h") {
            StandardStreams.out(usage + "\n")
            return .success
        }
        if let unknown = leading.first {
            return report(CommandLineError.usage("unknown option \(unknown)"), command: nil)
        }
        guard let commandIndex else {
            return report(CommandLineError.usage("no command given"), command: nil)
        }
        let name = arguments[commandIndex]
        var rest = ArgumentList(Array(arguments[(commandIndex + 1)...]))

        if name == "help" {
            return help(for: rest.positional())
        }
        guard let command = CommandRegistry.command(named: name) else {
            return report(CommandLineError.usage("unknown command '\(name)'"), command: nil)
        }
        if rest.flag("help", short: "h") {
            StandardStreams.out(command.usage + "\n")
            return .success
        }
        do {
            return try await command.run(&rest)
        } catch {
            return report(error, command: command.name)
        }
    }

    /// `blebridge help [command]`.
    private static func help(for name: String?) -> ExitStatus {
        guard let name else {
            StandardStreams.out(usage + "\n")
            return .success
        }
        guard let command = CommandRegistry.command(named: name) else {
            return report(CommandLineError.usage("unknown command '\(name)'"), command: nil)
        }
        StandardStreams.out(command.usage + "\n")
        return .success
    }

    /// Removes `--log-level LEVEL` / `--log-level=LEVEL` and sets the process-wide threshold.
    private static func applyLogLevel(_ arguments: inout [String]) throws {
        var list = ArgumentList(arguments)
        if let level = try list.option(
            "log-level", expected: "one of \(LogLevel.acceptedNames)", parse: LogLevel.init(name:))
        {
            LogConfiguration.shared.threshold = level
        }
        arguments = list.remaining
    }

    /// `BLEBRIDGE_LOG` is read by ``LogConfiguration``; a value it cannot parse must not pass silently.
    private static func warnAboutInvalidEnvironmentLogLevel() {
        guard let raw = ProcessEnvironment.value("BLEBRIDGE_LOG"), LogLevel(name: raw) == nil else { return }
        StandardStreams.error(
            "blebridge: ignoring BLEBRIDGE_LOG=\(raw): expected one of \(LogLevel.acceptedNames)\n")
    }

    /// Prints `error` as one line and returns its exit status; a usage error ends with where the
    /// help is (`blebridge run: unknown option --x (see 'blebridge run --help')`), not the help itself.
    static func report(_ error: any Error, command: String?) -> ExitStatus {
        switch error {
        case CommandLineError.usage(let message):
            StandardStreams.error("\(usageLine(message, command: command))\n")
            return .usage
        case CommandLineError.failure(let message, let status):
            StandardStreams.error("blebridge: \(message)\n")
            return status
        default:
            StandardStreams.error("blebridge: \(String(describing: error))\n")
            return .failure
        }
    }

    /// The one line printed for a usage error.
    static func usageLine(_ message: String, command: String?) -> String {
        let name = command.map { "blebridge \($0)" } ?? "blebridge"
        return "\(name): \(message) (see '\(name) --help')"
    }
}
