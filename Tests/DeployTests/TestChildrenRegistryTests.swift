import Foundation
import TestSupport
import Testing

/// The registry of a test run's children (`BLEBRIDGE_TEST_CHILDREN`) and
/// `scripts/kill-test-children.sh`, which stops the ones a dead test process left running: only
/// those still running under the listed start time, SIGTERM first, SIGKILL after the grace.
@Suite struct TestChildrenRegistryTests {
    private static let script = RepositoryPaths.file("scripts/kill-test-children.sh")

    private func stopListed(in directory: TemporaryDirectory) async throws -> (status: Int32, stderr: String) {
        let result = try await ChildProcess.run(
            "/bin/bash", [Self.script, directory.path, "1"], timeout: .seconds(20))
        return (result.status, result.stderr)
    }

    @Test func aListedChildThatStillRunsIsStoppedAndNoOtherProcess() async throws {
        let registry = try TemporaryDirectory(prefix: "children")
        let child = try ChildProcess("sleep", ["60"], registry: registry.path)
        let file = try #require(child.registryFile, "the child was not listed")
        let listed = try String(contentsOfFile: file, encoding: .utf8)
        let startTime = try #require(ChildProcess.startTime(of: child.processIdentifier))
        #expect(listed == "\(startTime)\n")
        // A process that runs under a listed number with another start time (the number reused):
        // left alone.
        let bystander = try ChildProcess("sleep", ["60"], registry: nil)
        try registry.write("\(bystander.processIdentifier)", "1\n")
        // A listed number that no longer runs: nothing to stop.
        try registry.write("999999999", "1\n")

        let result = try await stopListed(in: registry)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("stopped 1 children"), "\(result.stderr)")
        #expect(await child.waitForExit(timeout: .seconds(5)) != nil, "the listed child still runs")
        #expect(bystander.isRunning, "a process that only shares a listed number was stopped")
        #expect(try FileManager.default.contentsOfDirectory(atPath: registry.path).isEmpty)
        await bystander.stop()
    }

    @Test func aChildThatIgnoresSIGTERMIsKilledAfterTheGrace() async throws {
        let registry = try TemporaryDirectory(prefix: "children")
        let child = try ChildProcess(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"], registry: registry.path)
        #expect(await child.waitForOutput { $0.contains("ready") })
        let result = try await stopListed(in: registry)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(await child.waitForExit(timeout: .seconds(5)) != nil, "the child survived SIGKILL")
    }

    @Test func aReleasedChildIsNoLongerListed() async throws {
        let registry = try TemporaryDirectory(prefix: "children")
        var file: String?
        do {
            let child = try ChildProcess("sleep", ["60"], registry: registry.path)
            file = child.registryFile
            #expect(file.map { FileManager.default.fileExists(atPath: $0) } == true)
            await child.stop()
        }
        #expect(file.map { FileManager.default.fileExists(atPath: $0) } == false, "the released child is still listed")
        let result = try await stopListed(in: registry)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
    }
}
