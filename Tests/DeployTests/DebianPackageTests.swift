import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Builds the .deb with `deploy/package`, installs it with dpkg on this machine, checks what it
/// set up, removes it (data kept) and purges it (data and user gone). Needs root (CI runs as root).
@Suite(.serialized, .enabled(if: getuid() == 0, "installs a package with dpkg: needs root"))
struct DebianPackageTests {
    /// Runs a command that must succeed; returns its standard output.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws
        -> String
    {
        let result = try await ChildProcess.run(executable, arguments, timeout: timeout)
        guard result.status == 0 else {
            throw FixtureError(
                "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)\(result.stdout)"
            )
        }
        return result.stdout
    }

    private func status(_ executable: String, _ arguments: [String]) async throws -> Int32 {
        try await ChildProcess.run(executable, arguments, timeout: .seconds(30)).status
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    /// `setpriv` arguments that run a command as the `blebridge` user with its groups (exec, no fork).
    private static let asServiceUser = ["--reuid=blebridge", "--regid=blebridge", "--init-groups", "--"]

    @Test func buildsInstallsRemovesAndPurges() async throws {
        let lock = try await MachineLock(name: "blebridge-deb-test")
        defer { lock.release() }
        let output = try TemporaryDirectory(prefix: "deb")

        // A leftover from an interrupted run would make the checks below meaningless.
        if try await status("dpkg-query", ["-W", "blebridge"]) == 0 {
            try await run("dpkg", ["--purge", "blebridge"])
        }

        let built = try await run(
            RepositoryPaths.file("deploy/package"),
            ["--binary", try BinaryLocator.blebridge(), "--output", output.path], timeout: .seconds(50))
        let deb = try #require(built.split(separator: "\n").last.map(String.init))
        #expect(deb.hasSuffix(".deb") && exists(deb))
        #expect(try await run("dpkg-deb", ["--field", deb, "Package"]) == "blebridge\n")
        let contents = try await run("dpkg-deb", ["--contents", deb])
        for path in ["./usr/bin/blebridge", "./lib/systemd/system/blebridge.service", "./etc/blebridge/config.json"] {
            #expect(contents.contains(path), "\(path) not in the package")
        }

        do {
            try await installAndCheck(deb)
            try await upgradeAndCheck(output: output)
            try await removeAndCheck()
            try await purgeAndCheck()
        } catch {
            _ = try? await ChildProcess.run("dpkg", ["--purge", "blebridge"], timeout: .seconds(60))
            throw error
        }
    }

    private func installAndCheck(_ deb: String) async throws {
        try await run("dpkg", ["--install", deb])
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/blebridge"))
        #expect(exists("/lib/systemd/system/blebridge.service"))
        #expect(
            try await run("dpkg-query", ["-W", "-f=${Conffiles}", "blebridge"]).contains("/etc/blebridge/config.json"))

        // The system user, in group bluetooth, owning the data directory; the config readable by it only.
        let passwd = try await run("getent", ["passwd", "blebridge"])
        #expect(passwd.contains(":/var/lib/blebridge:") && passwd.hasSuffix(":/usr/sbin/nologin\n"), "\(passwd)")
        #expect(
            try await run("id", ["-nG", "blebridge"]).split(separator: " ").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }.contains("bluetooth"))
        #expect(try await run("stat", ["-c", "%U:%G %a", "/var/lib/blebridge"]) == "blebridge:blebridge 750\n")
        #expect(try await run("stat", ["-c", "%U:%G %a", "/etc/blebridge/config.json"]) == "root:blebridge 640\n")

        // Enabled for multi-user.target; the installed unit verifies.
        #expect(exists("/etc/systemd/system/multi-user.target.wants/blebridge.service"))
        let verify = try await ChildProcess.run(
            "systemd-analyze", ["verify", "/lib/systemd/system/blebridge.service"], timeout: .seconds(30))
        #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")

        // The service's own ExecStartPre, as the service user.
        let check = try await ChildProcess.run(
            "setpriv", Self.asServiceUser + ["/usr/bin/blebridge", "check-config", "/etc/blebridge/config.json"],
            timeout: .seconds(30))
        #expect(check.status == 0, "\(check.stderr)")

        // ExecStart as the unit runs it (service user, state directory as working directory), under a
        // harness that provides the notify socket. The outbox it writes stays there for the remove check.
        let broker = try await MosquittoFixture()
        let systemd = try NotifySocketFixture()
        let gateway = try ChildProcess(
            "setpriv",
            Self.asServiceUser + [
                "/usr/bin/blebridge", "run", "--config", "/etc/blebridge/config.json", "--broker", broker.url,
            ],
            environment: systemd.environment(watchdog: .seconds(1)), currentDirectory: "/var/lib/blebridge")
        try await ServiceNotifyTests.expectServiceProtocol(gateway, systemd)
        await broker.stop()
        #expect(exists("/var/lib/blebridge/blebridge.sqlite"), "the outbox lands in the state directory")
    }

    /// A newer package keeps the edited configuration (a conffile) and the data.
    private func upgradeAndCheck(output: TemporaryDirectory) async throws {
        let config = "/etc/blebridge/config.json"
        let edited = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(
            of: #""gateway_id": "blebridge""#, with: #""gateway_id": "attic""#)
        #expect(edited.contains("attic"))
        try edited.write(toFile: config, atomically: false, encoding: .utf8)
        let built = try await run(
            RepositoryPaths.file("deploy/package"),
            ["--binary", try BinaryLocator.blebridge(), "--version", "99.0.0", "--output", output.path],
            timeout: .seconds(50))
        let newer = try #require(built.split(separator: "\n").last.map(String.init))
        try await run("dpkg", ["--install", newer])
        #expect(try await run("dpkg-query", ["-W", "-f=${Version}", "blebridge"]) == "99.0.0")
        #expect(
            try String(contentsOfFile: config, encoding: .utf8) == edited, "the upgrade kept the edited configuration")
        #expect(!exists(config + ".dpkg-new") && !exists(config + ".dpkg-dist"))
        #expect(exists("/var/lib/blebridge/blebridge.sqlite"), "the upgrade kept the data")
        #expect(try await run("stat", ["-c", "%U:%G %a", "/etc/blebridge/config.json"]) == "root:blebridge 640\n")
    }

    private func removeAndCheck() async throws {
        try await run("dpkg", ["--remove", "blebridge"])
        #expect(!exists("/usr/bin/blebridge"))
        #expect(!exists("/lib/systemd/system/blebridge.service"))
        #expect(exists("/etc/blebridge/config.json"), "remove keeps the configuration")
        #expect(exists("/var/lib/blebridge/blebridge.sqlite"), "remove keeps the data")
        #expect(try await status("getent", ["passwd", "blebridge"]) == 0, "remove keeps the user")
    }

    private func purgeAndCheck() async throws {
        try await run("dpkg", ["--purge", "blebridge"])
        #expect(!exists("/etc/blebridge/config.json"))
        #expect(!exists("/etc/blebridge"))
        #expect(!exists("/var/lib/blebridge"))
        #expect(!exists("/etc/systemd/system/multi-user.target.wants/blebridge.service"))
        #expect(try await status("getent", ["passwd", "blebridge"]) == 2, "purge removes the user")
        #expect(try await status("dpkg-query", ["-W", "blebridge"]) != 0)
    }
}

/// An exclusive lock shared by every worktree on this machine (dpkg allows one installer at a time).
final class MachineLock: Sendable {
    private let descriptor: Int32

    /// Waits (without blocking a thread) until the lock is free.
    init(name: String, timeout: Duration = .seconds(120)) async throws {
        descriptor = open("/tmp/\(name).lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw FixtureError("cannot open /tmp/\(name).lock") }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(descriptor)
                throw FixtureError("another test holds /tmp/\(name).lock")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func release() {
        flock(descriptor, LOCK_UN)
    }

    deinit {
        close(descriptor)
    }
}
