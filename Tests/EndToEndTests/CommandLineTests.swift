import TestSupport
import Testing

/// The command-line contract: help, version, global options and exit statuses, run on the built binary.
@Suite struct CommandLineTests {
    private func blebridge(_ arguments: [String], environment: [String: String]? = nil) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        try await ChildProcess.run(
            try BinaryLocator.blebridge(), arguments, environment: environment, timeout: .seconds(20))
    }

    @Test func versionPrintsAndExitsZero() async throws {
        let result = try await blebridge(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("blebridge "))
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func helpGoesToStandardOutputAndExitsZero(_ arguments: [String]) async throws {
        let result = try await blebridge(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: blebridge"))
        #expect(result.stdout.contains("--log-level LEVEL"))
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [["no-such-command"], [], ["--no-such-option"], ["--log-level"], ["help", "no-such-command"]])
    func usageErrorsExit64WithHelpOnStandardError(_ arguments: [String]) async throws {
        let result = try await blebridge(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("blebridge: "))
        #expect(result.stderr.contains("Usage: blebridge"))
        #expect(result.stdout.isEmpty)
    }

    @Test func anInvalidLogLevelIsAUsageErrorNamingTheAcceptedLevels() async throws {
        let result = try await blebridge(["--log-level", "loud", "--version"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--log-level loud: expected one of trace, debug, info, notice, warning, error"))
    }

    @Test func aValidLogLevelIsAcceptedInBothSpellings() async throws {
        #expect(try await blebridge(["--log-level", "debug", "--version"]).status == 0)
        #expect(try await blebridge(["--log-level=warning", "--version"]).status == 0)
    }

    @Test func anInvalidEnvironmentLogLevelIsReportedNotIgnoredSilently() async throws {
        let result = try await blebridge(["--version"], environment: ["BLEBRIDGE_LOG": "chatty"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("ignoring BLEBRIDGE_LOG=chatty"))
    }
}
