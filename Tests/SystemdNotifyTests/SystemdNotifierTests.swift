import Foundation
import Synchronization
import SystemdNotify
import TestSupport
import Testing

/// The notify protocol against a socket that plays systemd.
@Suite struct SystemdNotifierTests {
    @Test func isAbsentWithoutNotifySocket() throws {
        #expect(try SystemdNotifier.fromEnvironment([:]) == nil)
        #expect(try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": ""]) == nil)
    }

    @Test func rejectsARelativeSocketPath() {
        #expect(throws: SystemdNotifyError.self) {
            try SystemdNotifier.fromEnvironment(["NOTIFY_SOCKET": "notify.sock"])
        }
    }

    @Test func sendsReadyAndStatusInOneDatagram() async throws {
        let systemd = try NotifySocketFixture()
        let notifier = try #require(try SystemdNotifier.fromEnvironment(systemd.environment()))
        #expect(notifier.watchdogInterval == nil)
        try notifier.notify(.ready, .status("5 devices\nconnected"))
        #expect(await systemd.waitForMessage(timeout: .seconds(30)) { $0 == "READY=1\nSTATUS=5 devices connected\n" })
        try notifier.notify(.reloading)
        try notifier.notify(.stopping)
        try notifier.notify(.errno(5), .mainPID(42), .extendTimeout(.seconds(3)))
        #expect(await systemd.waitForMessage(timeout: .seconds(30)) { $0.hasPrefix("ERRNO") })
        #expect(
            systemd.messages == [
                "READY=1\nSTATUS=5 devices connected\n", "RELOADING=1\n", "STOPPING=1\n",
                "ERRNO=5\nMAINPID=42\nEXTEND_TIMEOUT_USEC=3000000\n",
            ])
    }

    @Test func watchdogIntervalIsHalfOfWatchdogUsecAndOnlyForThisProcess() throws {
        let systemd = try NotifySocketFixture()
        var environment = systemd.environment(watchdog: .seconds(10))
        #expect(try SystemdNotifier.fromEnvironment(environment)?.watchdogInterval == .seconds(5))
        environment["WATCHDOG_PID"] = "\(getpid())"
        #expect(try SystemdNotifier.fromEnvironment(environment)?.watchdogInterval == .seconds(5))
        environment["WATCHDOG_PID"] = "1"
        #expect(try SystemdNotifier.fromEnvironment(environment)?.watchdogInterval == nil)
    }

    @Test func watchdogPingsWhileHealthyAndStopsWhenNot() async throws {
        let systemd = try NotifySocketFixture()
        let notifier = try #require(
            try SystemdNotifier.fromEnvironment(systemd.environment(watchdog: .milliseconds(40))))
        #expect(notifier.watchdogInterval == .milliseconds(20))
        let healthy = Atomic<Bool>(true)
        let unhealthyChecks = Atomic<Int>(0)
        let task = Task {
            await notifier.runWatchdog {
                let isHealthy = healthy.load(ordering: .sequentiallyConsistent)
                if !isHealthy { unhealthyChecks.add(1, ordering: .sequentiallyConsistent) }
                return isHealthy
            }
        }
        defer { task.cancel() }
        #expect(await systemd.waitForMessage(timeout: .seconds(30)) { _ in systemd.messages.count >= 3 })
        #expect(Set(systemd.messages) == ["WATCHDOG=1\n"])

        healthy.store(false, ordering: .sequentiallyConsistent)
        // The loop is sequential: once it has seen "unhealthy", any earlier ping has been sent.
        #expect(
            await waitUntil(timeout: .seconds(30), interval: .milliseconds(5)) {
                unhealthyChecks.load(ordering: .sequentiallyConsistent) >= 1
            })
        let countWhenUnhealthy = systemd.messages.count
        // Several more checks (the loop keeps running) and not one more ping.
        #expect(
            await waitUntil(timeout: .seconds(30), interval: .milliseconds(5)) {
                unhealthyChecks.load(ordering: .sequentiallyConsistent) >= 5
            })
        #expect(systemd.messages.count == countWhenUnhealthy)
    }

    @Test func watchdogIsOffWithoutWatchdogUsec() async throws {
        let systemd = try NotifySocketFixture()
        let notifier = try #require(try SystemdNotifier.fromEnvironment(systemd.environment()))
        // Returns at once: no loop runs (bounded, so a loop that ran would fail the test, not hang it).
        let returned = await withDeadline(.seconds(10)) { () async -> Bool? in
            await notifier.runWatchdog { true }
            return true
        }
        #expect(returned == true)
    }

    @Test func reportsSendFailureWhenSystemdIsGone() throws {
        let directory = try TemporaryDirectory()
        let notifier = try SystemdNotifier(socketAddress: directory.file("nobody.sock").path)
        let error = try requireThrows(SystemdNotifyError.self) { try notifier.notify(.ready) }
        #expect(error.code == .sendFailed)
        #expect(error.errno == ENOENT)
    }
}
