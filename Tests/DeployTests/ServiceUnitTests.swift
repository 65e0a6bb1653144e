import Foundation
import TestSupport
import Testing

/// `deploy/blebridge.service` passes `systemd-analyze verify` and keeps its promises.
@Suite struct ServiceUnitTests {
    let unit: String

    init() throws {
        unit = try String(contentsOfFile: RepositoryPaths.file("deploy/blebridge.service"), encoding: .utf8)
    }

    /// The unit with /usr/bin/blebridge pointing at the freshly built binary (verify checks ExecStart exists).
    private func writeVerifiableCopy(_ text: String, in directory: TemporaryDirectory) throws -> String {
        let binary = try BinaryLocator.blebridge()
        return try directory.write(
            "blebridge.service", text.replacingOccurrences(of: "/usr/bin/blebridge", with: binary)
        )
        .path
    }

    /// `systemd-analyze` resolves `User=blebridge`, which the package test creates and deletes:
    /// take the same machine-wide lock.
    private func analyze(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let lock = try await MachineLock(name: "blebridge-deb-test")
        defer { lock.release() }
        return try await ChildProcess.run("systemd-analyze", arguments, timeout: .seconds(30))
    }

    @Test func systemdAnalyzeVerifyIsClean() async throws {
        let directory = try TemporaryDirectory()
        let path = try writeVerifiableCopy(unit, in: directory)
        let result = try await analyze(["verify", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "every warning counts: \(result.stderr)")
    }

    @Test func verifyWouldCatchAMistake() async throws {
        let directory = try TemporaryDirectory()
        let path = try writeVerifiableCopy(
            unit.replacingOccurrences(of: "Type=notify", with: "Type=notfy"), in: directory)
        let result = try await analyze(["verify", path])
        #expect(result.stderr.contains("notfy"))
    }

    @Test func declaresNotifyWatchdogRestartOrderingAndHardening() {
        let lines = Set(unit.split(separator: "\n").map(String.init))
        for directive in [
            "Type=notify", "WatchdogSec=30s", "Restart=on-failure", "After=bluetooth.target network-online.target",
            "User=blebridge", "SupplementaryGroups=bluetooth", "StateDirectory=blebridge", "NoNewPrivileges=yes",
            "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes",
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6",
            "CapabilityBoundingSet=", "AmbientCapabilities=", "RestartPreventExitStatus=64 78",
            "ExecReload=/bin/kill -HUP $MAINPID",
        ] {
            #expect(lines.contains(directive), "missing \(directive)")
        }
    }

    @Test func systemdRatesTheExposureAsLow() async throws {
        let directory = try TemporaryDirectory()
        let path = try writeVerifiableCopy(unit, in: directory)
        let result = try await analyze(["security", "--offline=yes", "--no-pager", path])
        let line = try #require(
            result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") },
            "status \(result.status): \(result.stderr)")
        let score = try #require(
            line.split(separator: " ").compactMap { Double($0) }.first, "no score in: \(line)")
        #expect(score <= 2.0, "\(line)")
    }
}
