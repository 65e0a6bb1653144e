import Foundation
import TestSupport
import Testing

/// `bench/lib.sh`, the start-up code the benchmark scripts share: its daemons answer, a daemon that
/// cannot start is reported and not left behind, and no script carries its own copy again.
@Suite struct BenchLibraryTests {
    static let scripts = ["bench/run.sh", "bench/dbus/run.sh", "bench/mqtt/run.sh", "scripts/bench-outbox.sh"]

    private func bash(_ script: String, path: String? = nil) async throws -> (
        status: Int32, stdout: String, stderr: String
    ) {
        var environment = ProcessInfo.processInfo.environment
        environment["LIB"] = RepositoryPaths.file("bench/lib.sh")
        if let path { environment["PATH"] = path + ":" + (environment["PATH"] ?? "/usr/bin:/bin") }
        return try await ChildProcess.run(
            "/bin/bash", ["-euo", "pipefail", "-c", script], environment: environment, timeout: .seconds(30))
    }

    @Test func startsADBusDaemonAndAMosquittoThatAnswer() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-lib")
        let result = try await bash(
            """
            . "$LIB"
            start_dbus '\(directory.path)/bus'
            start_mosquitto '\(directory.path)/mqtt'
            trap 'kill $bus_pid $mosquitto_pid' EXIT
            dbus-send --bus="$bus_address" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId >/dev/null
            mosquitto_pub -h 127.0.0.1 -p "$mqtt_port" -q 1 -t bench/lib -m ok
            grep -q max_queued_messages '\(directory.path)/mqtt/mosquitto.conf'
            echo "answered $mqtt_port"
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("answered "))
    }

    @Test func aDaemonThatCannotStartIsReportedAndNotLeftRunning() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-lib")
        try FileManager.default.createDirectory(at: directory.file("bin"), withIntermediateDirectories: true)
        let fake = try directory.write("bin/mosquitto", "#!/bin/sh\necho 'Error: no such option' >&2\nexit 3\n")
        #expect(chmod(fake.path, 0o755) == 0)
        let result = try await bash(
            """
            . "$LIB"
            if start_mosquitto '\(directory.path)/mqtt'; then echo started; exit 1; fi
            kill -0 "$mosquitto_pid" 2>/dev/null && { echo "left running"; exit 1; }
            echo reported
            """, path: directory.file("bin").path)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout == "reported\n")
        #expect(result.stderr.contains("mosquitto did not start on port"))
        #expect(result.stderr.contains("Error: no such option"))
    }

    @Test(arguments: scripts)
    func scriptsUseTheSharedStartUp(_ script: String) async throws {
        let text = try String(contentsOfFile: RepositoryPaths.file(script), encoding: .utf8)
        #expect(text.contains("bench/lib.sh"))
        #expect(!text.contains("<busconfig>"), "\(script) writes its own dbus-daemon configuration")
        #expect(!text.contains("listener "), "\(script) writes its own mosquitto configuration")
        let syntax = try await bash("bash -n '\(RepositoryPaths.file(script))'")
        #expect(syntax.status == 0, "\(syntax.stderr)")
    }
}
