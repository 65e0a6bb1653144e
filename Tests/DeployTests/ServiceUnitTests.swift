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

    /// No lock: nothing here depends on what the package test (of this or another checkout on the
    /// machine) installs and removes meanwhile. The copy is loaded from its own directory, ahead of
    /// a `blebridge.service` in the system's unit path (checked with a broken one there: still
    /// clean); `ExecStart=` is this build's binary, not /usr/bin/blebridge; and a missing
    /// `User=blebridge` changes neither `verify` nor the `security` score (systemd 252). Holding
    /// the package test's machine-wide lock made these wait for a .deb build and lintian in
    /// another checkout (150–220 s) and fail after 120 s.
    private func analyze(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await ChildProcess.run("systemd-analyze", arguments, timeout: .seconds(30))
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
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "MemoryDenyWriteExecute=yes",
            "SystemCallFilter=@system-service", "CapabilityBoundingSet=", "AmbientCapabilities=",
            "ConditionPathExists=/etc/blebridge/config.json",
        ] {
            #expect(lines.contains(directive), "missing \(directive)")
        }
    }

    private func values(of key: String) -> [String] {
        unit.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    /// RestartPreventExitStatus= has no effect on ExecStartPre= (systemd issue 11868): a check
    /// there restarts a bad configuration forever. `run` checks the configuration itself.
    @Test func noStartPreCheckThatWouldLoop() {
        #expect(values(of: "ExecStartPre").isEmpty)
        #expect(values(of: "ExecStart") == ["/usr/bin/blebridge run --config /etc/blebridge/config.json"])
    }

    /// Every way `blebridge run` rejects a configuration exits with a status the unit does not
    /// restart: the unit fails once and stays failed.
    @Test func everyConfigurationFailureOfRunIsExemptFromRestart() async throws {
        let prevented = Set(
            try #require(values(of: "RestartPreventExitStatus").first).split(separator: " ").map {
                Int32($0)
            })
        let directory = try TemporaryDirectory(prefix: "unit-config")
        let badJSON = try directory.write("bad.json", #"{"mqtt": {"url": "#)
        let sample = try String(contentsOfFile: RepositoryPaths.file("config.json"), encoding: .utf8)
        let invalid = try directory.write(
            "invalid.json", sample.replacingOccurrences(of: #""gateway_id""#, with: #""gateway_idd""#))
        #expect(sample.contains(#""gateway_id""#), "the sample has the key the test misspells")
        var statuses: [String: Int32] = [:]
        for (name, path) in [
            ("missing", directory.file("missing.json").path), ("bad JSON", badJSON.path), ("invalid", invalid.path),
        ] {
            let result = try await ChildProcess.run(
                try BinaryLocator.blebridge(), ["run", "--config", path], timeout: .seconds(30))
            statuses[name] = result.status
            #expect(
                result.status != 0 && prevented.contains(result.status), "\(name): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(path), "the reason names the file: \(result.stderr)")
        }
        #expect(statuses["missing"] == 66 && statuses["invalid"] == 78, "\(statuses)")
        let usage = try await ChildProcess.run(
            try BinaryLocator.blebridge(), ["run", "--nonsense"], timeout: .seconds(30))
        #expect(prevented.contains(usage.status), "usage error exits \(usage.status)")
    }

    /// `systemctl reload` runs check-config first, so a broken file fails the reload (and the
    /// running configuration stays); only a valid file reaches the gateway as SIGHUP.
    @Test func reloadChecksTheFileBeforeSignalling() async throws {
        let reload = values(of: "ExecReload")
        #expect(
            reload == [
                "/usr/bin/blebridge check-config /etc/blebridge/config.json", "/bin/kill -HUP $MAINPID",
            ])
        let directory = try TemporaryDirectory(prefix: "unit-reload")
        let broken = try directory.write("config.json", #"{"devices": ["#)
        let check = try #require(reload.first).replacingOccurrences(of: "/etc/blebridge/config.json", with: broken.path)
            .split(separator: " ").map(String.init)
        let result = try await ChildProcess.run(
            try BinaryLocator.blebridge(), Array(check.dropFirst()), timeout: .seconds(30))
        #expect(result.status != 0, "check-config accepted a broken file")
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
        #expect(score <= 1.5, "\(line)")
    }
}
