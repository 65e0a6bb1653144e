import TestSupport
import Testing

@Suite struct CommandLineTests {
    @Test func versionPrintsAndExitsZero() async throws {
        let result = try await ChildProcess.run(try BinaryLocator.blebridge(), ["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("blebridge "))
    }

    @Test func usageErrorsExit64WithHelpOnStandardError() async throws {
        let result = try await ChildProcess.run(try BinaryLocator.blebridge(), ["no-such-command"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("Usage: blebridge"))
        #expect(result.stdout.isEmpty)
    }
}
