import Foundation
import TestSupport
import Testing

/// `blebridge check-config` reads a configuration from a pipe: `-`, `/dev/stdin`, a FIFO.
@Suite struct CheckConfigPipeTests {
    /// Runs `sh -c script` with BLEBRIDGE set to the built binary.
    private func shell(_ script: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["BLEBRIDGE"] = try BinaryLocator.blebridge()
        return try await ChildProcess.run("/bin/sh", ["-c", script], environment: environment, timeout: .seconds(20))
    }

    @Test(arguments: ["-", "/dev/stdin"])
    func aPipedConfigurationIsRead(_ path: String) async throws {
        let result = try await shell(#"printf '{"devices": []}' | "$BLEBRIDGE" check-config \#(path)"#)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(path): OK\n"), "\(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test func aPipedInvalidConfigurationNamesTheKeyPath() async throws {
        let result = try await shell(#"printf '{"mqtt": {"qos": 7}}' | "$BLEBRIDGE" check-config -"#)
        #expect(result.status == 78)
        #expect(result.stderr.hasPrefix("blebridge: -: mqtt.qos"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aFIFOIsRead() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.file("config.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try await shell(#"printf '{"devices": []}' > '\#(fifo)' & "$BLEBRIDGE" check-config '\#(fifo)'"#)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(fifo): OK\n"))
    }

    @Test func aDashIsAFileNameForRun() async throws {
        // Only check-config reads standard input; `run` re-reads its file on SIGHUP.
        let result = try await shell(#"printf '{}' | "$BLEBRIDGE" run --config -"#)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("blebridge: -: no such file"), "\(result.stderr)")
    }
}
