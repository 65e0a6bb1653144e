import Foundation
import TestSupport
import Testing

/// `blebridge run` under a harness that plays systemd's notify socket: READY=1 once running,
/// WATCHDOG=1 at half of WATCHDOG_USEC, STATUS= as the gateway's state changes, STOPPING=1 on
/// SIGTERM, exit 0.
@Suite(.serialized) struct ServiceNotifyTests {
    /// The repository's config.json; `run` gets the broker and outbox on its command line.
    static var sampleConfiguration: String { RepositoryPaths.file("config.json") }

    @Test func runNotifiesReadyWatchdogAndStopping() async throws {
        let broker = try await MosquittoFixture()
        let systemd = try NotifySocketFixture()
        let directory = try TemporaryDirectory(prefix: "notify-run")
        var environment = systemd.environment(watchdog: .seconds(1))
        environment["BLEBRIDGE_LOG"] = "debug"
        let gateway = try ChildProcess(
            try BinaryLocator.blebridge(),
            [
                "run", "--config", Self.sampleConfiguration, "--broker", broker.url, "--outbox",
                directory.file("outbox.sqlite").path,
            ], environment: environment)
        try await Self.expectServiceProtocol(gateway, systemd)
        await broker.stop()
    }

    /// Shared with the package test, which runs the installed binary as the `blebridge` user.
    static func expectServiceProtocol(_ gateway: ChildProcess, _ systemd: NotifySocketFixture) async throws {
        let ready = await systemd.waitForMessage(timeout: .seconds(30)) { $0.contains("READY=1\n") }
        #expect(ready, "no READY=1; notifications: \(systemd.messages); log: \(gateway.standardError)")
        let ping = await systemd.waitForMessage(timeout: .seconds(5)) { $0 == "WATCHDOG=1\n" }
        #expect(ping, "no WATCHDOG=1 with WATCHDOG_USEC=1000000; notifications: \(systemd.messages)")
        // STATUS= follows the gateway: the broker (a real mosquitto) connects after READY.
        let status = await systemd.waitForMessage(timeout: .seconds(15)) {
            $0.hasPrefix("STATUS=Bluetooth ") && $0.contains("; broker connected; outbox ")
        }
        #expect(status, "no STATUS= with the broker connected; notifications: \(systemd.messages)")
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit(timeout: .seconds(20)) == 0, "\(gateway.standardError)")
        #expect(
            systemd.messages.contains { $0.contains("STOPPING=1\n") && $0.contains("STATUS=stopping") },
            "\(systemd.messages)")
        let readyIndex = systemd.messages.firstIndex { $0.contains("READY=1\n") }
        let stoppingIndex = systemd.messages.firstIndex { $0.contains("STOPPING=1\n") }
        if let readyIndex, let stoppingIndex { #expect(readyIndex < stoppingIndex) }
    }
}
