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

    @Test func systemdAnalyzeVerifyIsClean() async throws {
        let directory = try TemporaryDirectory()
        let path = try writeVerifiableCopy(unit, in: directory)
        let result = try await ChildProcess.run("systemd-analyze", ["verify", path], timeout: .seconds(30))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "every warning counts: \(result.stderr)")
    }

    @Test func verifyWouldCatchAMistake() async throws {
        let directory = try TemporaryDirectory()
        let path = try writeVerifiableCopy(
            unit.replacingOccurrences(of: "Type=notify", with: "Type=notfy"), in: directory)
        let result = try await ChildProcess.run("systemd-analyze", ["verify", path], timeout: .seconds(30))
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
        let result = try await ChildProcess.run(
            "systemd-analyze", ["security", "--offline=yes", "--no-pager", path], timeout: .seconds(30))
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(
            line.split(separator: " ").compactMap { Double($0) }.first, "no score in: \(line)")
        #expect(score <= 2.0, "\(line)")
    }
}
