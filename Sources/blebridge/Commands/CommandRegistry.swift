// How to add a subcommand:
//   1. Create `Commands/<Name>Command.swift` with a type conforming to `CLICommand`
//      (see `CLI/CLICommand.swift`): its `name`, a one-line `summary`, a `usage` text, and
//      `static func run(_ arguments: inout ArgumentList) async throws -> ExitStatus` that reads its
//      options with `arguments.option(...)` / `arguments.flag(...)` / `arguments.positional()`,
//      calls `arguments.finish()`, then does the work.
//   2. Add one line, `<Name>Command.self,`, to `commands` below (the order is the order in `--help`).
// Throw `CommandLineError.usage("…")` for bad arguments (help goes to stderr, exit 64) and
// `CommandLineError.failure("what happened; what to do", status: …)` for runtime failures.
// `--help`, `--version` and `--log-level` are handled before your command runs.

/// Every `blebridge` subcommand.
enum CommandRegistry {
    static let commands: [any CLICommand.Type] = [
        RunCommand.self,
        DemoCommand.self,
        CheckConfigCommand.self,
        DecodeCommand.self,
        ScanCommand.self,
        SimulateCommand.self,
    ]

    static func command(named name: String) -> (any CLICommand.Type)? {
        commands.first { $0.name == name }
    }
}
