import Foundation
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
    func usageErrorsExit64WithOneLineAndAHint(_ arguments: [String]) async throws {
        let result = try await blebridge(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("blebridge: "))
        #expect(result.stderr.hasSuffix(" (see 'blebridge --help')\n"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line, not the help: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aCommandsUsageErrorNamesTheCommandAndItsHelp() async throws {
        let result = try await blebridge(["run", "--no-such-option"])
        #expect(result.status == 64)
        #expect(result.stderr == "blebridge run: unknown option --no-such-option (see 'blebridge run --help')\n")
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

    // MARK: check-config

    private static var sampleConfiguration: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config.json").path
    }

    @Test func checkConfigAcceptsTheSampleAndPrintsASummary() async throws {
        let result = try await blebridge(["check-config", Self.sampleConfiguration])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("config.json: OK"))
        #expect(result.stdout.contains("lamp (Lamp): keep_connected"))
        #expect(result.stdout.contains("commands: power [read,write,notify]"))
        #expect(result.stderr.isEmpty)
    }

    @Test func checkConfigDefaultsToConfigJSONInTheWorkingDirectory() async throws {
        let directory = try TemporaryDirectory()
        try directory.write("config.json", #"{"devices": []}"#)
        let child = try ChildProcess(try BinaryLocator.blebridge(), ["check-config"], currentDirectory: directory.path)
        #expect(await child.waitForExit(timeout: .seconds(20)) == 0)
        #expect(child.standardOutput.hasPrefix("config.json: OK"))
    }

    @Test(arguments: [
        (#"{"mqtt": {"qos": 1, "retain_all": true}}"#, "mqtt.retain_all: unknown key"),
        (#"{"bluetooth": {"max_connections": "five"}}"#, "bluetooth.max_connections: expected an integer"),
        (
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "subscribe": [{"characteristic": "battery_level", "mode": "read", "interval": "10 minutes"}]}]}"#,
            "devices[0].subscribe[0].interval: \"10 minutes\" is not a duration"
        ),
        (
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "subscribe": [{"characteristic": "2a37x"}]}]}"#,
            "devices[0].subscribe[0].characteristic: \"2a37x\" is not a UUID"
        ),
        (
            #"{"devices": [{"id": "a", "match": {"name_prefix": "A"}, "advertisement": {"decoder": "bthom"}}]}"#,
            "devices[0].advertisement.decoder: unknown decoder \"bthom\" (did you mean \"bthome\"?)"
        ),
        (
            "{\n  \"mqtt\": {\n    \"qos\": 1\n  \n}\n",
            "bad.json:6:1: invalid JSON: unexpected end of input; expected ',' or '}'"
        ),
    ])
    func checkConfigRejectsWithTheKeyPathOnOneLine(_ json: String, _ expected: String) async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("bad.json", json)
        let result = try await blebridge(["check-config", file.path])
        #expect(result.status == 78)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
        #expect(result.stderr.hasPrefix("blebridge: \(file.path)"))
        #expect(result.stderr.split(separator: "\n").count == 1, "one line, no stack trace: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func checkConfigReportsAMissingFileWithWhatToDo() async throws {
        let result = try await blebridge(["check-config", "/nonexistent/config.json"])
        #expect(result.status == 66)
        #expect(
            result.stderr
                == "blebridge: /nonexistent/config.json: no such file; pass the path of your configuration (the repository's config.json is a sample)\n"
        )
    }

    @Test func checkConfigReportsAnUnreadableFileWithWhatToDo() async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("secret.json", "{}")
        #expect(chmod(file.path, 0o000) == 0)
        // Root reads anything: run as `nobody` then.
        let result =
            getuid() == 0
            ? try await ChildProcess.run(
                "setpriv",
                [
                    "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", try BinaryLocator.blebridge(),
                    "check-config", file.path,
                ],
                timeout: .seconds(20))
            : try await blebridge(["check-config", file.path])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(
            result.stderr
                == "blebridge: \(file.path): cannot be read (permission denied?); make it readable by the user blebridge runs as\n"
        )
    }

    @Test func checkConfigRejectsExtraArguments() async throws {
        let result = try await blebridge(["check-config", "a.json", "b.json"])
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "blebridge check-config: unexpected argument b.json (see 'blebridge check-config --help')\n")
    }
}
