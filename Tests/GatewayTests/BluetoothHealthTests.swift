import Bluetooth
import DBus
import Foundation
import Synchronization
import TestSupport
import Testing
import Timekeeping

@testable import Gateway

@Suite struct BluetoothHealthTests {
    @Test func retryBacksOffFromOneSecondToEightAndResetsOnSuccess() {
        let clock = ManualClock()
        var retry = BluetoothRetry(clock: clock)
        #expect(!retry.isDue())
        var delays: [Duration] = []
        for _ in 0..<6 {
            let due = retry.failed()
            delays.append(clock.now.duration(to: due))
            #expect(!retry.isDue())
            clock.advance(by: clock.now.duration(to: due) - .milliseconds(1))
            #expect(!retry.isDue())
            clock.advance(by: .milliseconds(1))
            #expect(retry.isDue())
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)])
        retry.succeeded()
        #expect(retry.failures == 0 && !retry.isDue())
        #expect(clock.now.duration(to: retry.failed()) == .seconds(1))
        #expect(retry.delay(afterFailures: 1_000) == .seconds(8))
    }

    /// A policy change brings a later attempt forward to one second from now, never an earlier
    /// one, and does nothing when no attempt is scheduled.
    @Test func aPolicyChangeBringsTheRetryForward() {
        let clock = ManualClock()
        var retry = BluetoothRetry(clock: clock)
        #expect(retry.changed() == nil, "nothing scheduled")
        for _ in 0..<4 { _ = retry.failed() }
        #expect(clock.now.duration(to: retry.nextAttempt!) == .seconds(8))
        clock.advance(by: .seconds(2))
        let soon = retry.changed()
        #expect(soon.map { clock.now.duration(to: $0) } == .seconds(1))
        #expect(retry.nextAttempt == soon)
        #expect(retry.changed(settle: .seconds(3)) == nil, "the attempt due in 1 s stays")
        clock.advance(by: .seconds(1))
        #expect(retry.isDue())
        // The early attempt failing again continues the backoff where it was.
        #expect(clock.now.duration(to: retry.failed()) == .seconds(8))
        retry.succeeded()
        #expect(retry.changed() == nil)
    }

    /// The watch reports a file created, rewritten and removed in a watched directory, and ends its
    /// stream when cancelled.
    @Test func thePolicyWatchReportsChangesAndEndsWhenCancelled() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let watch = try #require(PolicyDirectoryWatch(directories: [directory.path, "/nonexistent/dbus-1"]))
        #expect(PolicyDirectoryWatch(directories: ["/nonexistent/dbus-1"]) == nil)
        let seen = Mutex(0)
        let ended = Mutex(false)
        let stream = watch.changes
        let consumer = Task {
            for await _ in stream { seen.withLock { $0 += 1 } }
            ended.withLock { $0 = true }
        }
        let file = directory.appendingPathComponent("deny.conf")
        try Data("<busconfig/>".utf8).write(to: file)
        #expect(await waitUntil { seen.withLock { $0 } >= 1 }, "no change reported for a new file")
        let before = seen.withLock { $0 }
        try FileManager.default.removeItem(at: file)
        #expect(await waitUntil { seen.withLock { $0 } > before }, "no change reported for a removed file")
        watch.cancel()
        #expect(await waitUntil { ended.withLock { $0 } }, "the stream did not end")
        watch.cancel()
        consumer.cancel()
    }

    @Test func managerStatesAndErrorsMapToProblems() {
        #expect(BluetoothHealth.problem(for: .poweredOn, bluezRunning: true) == nil)
        #expect(BluetoothHealth.problem(for: .poweredOff, bluezRunning: true) == .adapterPoweredOff)
        #expect(BluetoothHealth.problem(for: .unsupported, bluezRunning: false) == .bluezNotRunning)
        #expect(BluetoothHealth.problem(for: .unsupported, bluezRunning: true) == .adapterMissing)
        #expect(BluetoothHealth.problem(for: .resetting, bluezRunning: false) == .bluezNotRunning)
        #expect(BluetoothHealth.problem(for: .unauthorized, bluezRunning: true) == .accessDenied)
        #expect(BluetoothHealth.problem(for: .unknown, bluezRunning: false) == .starting)
        #expect(BluetoothHealth.problem(for: DBusError(name: .accessDenied, message: "")) == .accessDenied)
        #expect(BluetoothHealth.problem(for: DBusError(name: .noReply, message: "")) == .accessDenied)
        #expect(BluetoothHealth.problem(for: DBusError(name: .noServer, message: "")) == .busUnavailable)
        #expect(BluetoothHealth.problem(for: DBusError(name: .fileNotFound, message: "")) == .busUnavailable)
        #expect(BluetoothHealth.problem(for: BluetoothError(.unauthorized)) == .accessDenied)
    }

    /// dbus-daemon's refusal names the refused connection, which is new on every retry: the kind
    /// (what decides whether the log says it again) is the error's name alone.
    @Test func theLastErrorKindIgnoresWhatChangesOnEveryRetry() {
        func refusal(_ sender: String) -> BluetoothHealth {
            BluetoothHealth(
                adapter: "hci0",
                lastError: "org.freedesktop.DBus.Error.AccessDenied: Rejected send message, 4 matched rules; "
                    + "type=\"method_call\", sender=\"\(sender)\" (uid=995 pid=303)",
                problem: .accessDenied)
        }
        #expect(refusal(":1.12").lastErrorKind == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(refusal(":1.12").lastErrorKind == refusal(":1.14").lastErrorKind)
        #expect(BluetoothHealth(adapter: "hci0", lastError: "gone").lastErrorKind == "gone")
        #expect(BluetoothHealth(adapter: "hci0").lastErrorKind == nil)
    }

    @Test func everyProblemSaysWhatToFixAndTheStatusLineSaysUnavailable() {
        for problem in BluetoothHealth.Problem.allCases where problem != .starting {
            let health = BluetoothHealth(adapter: "hci0", problem: problem)
            #expect(health.advice?.isEmpty == false, "\(problem) has no advice")
            #expect(health.statusText.hasPrefix("Bluetooth unavailable (\(problem.rawValue))"))
            #expect(!health.isAvailable)
        }
        #expect(BluetoothHealth(adapter: "hci0", problem: .accessDenied).advice?.contains("'bluetooth' group") == true)
        // Refused access names the user, both fixes and what makes the fix take effect.
        let denied = BluetoothHealth(adapter: "hci0", problem: .accessDenied, user: "blebridge").advice ?? ""
        for part in [
            "user 'blebridge'", "SupplementaryGroups=bluetooth", "restart the gateway",
            #"<deny send_destination="org.bluez"/>"#, "/etc/dbus-1/system.d/", "systemctl reload dbus",
        ] {
            #expect(denied.contains(part), "advice lacks \(part): \(denied)")
        }
        #expect(BluetoothHealth(adapter: "hci0", problem: .adapterPoweredOff).advice?.contains("rfkill") == true)
        #expect(
            BluetoothHealth(adapter: "hci0", problem: .bluezNotRunning).advice?.contains("bluetooth.service") == true)
        let noMonitors = BluetoothHealth(adapter: "hci0", problem: .monitorUnsupported).advice ?? ""
        for part in ["AdvertisementMonitorManager1", "-E", "Experimental = true", "resumes by itself"] {
            #expect(noMonitors.contains(part), "advice lacks \(part): \(noMonitors)")
        }
        let ready = BluetoothHealth(
            adapter: "hci1", adapterPresent: true, powered: true, bluezOwner: ":1.4", lastError: "gone", problem: nil)
        #expect(ready.advice == nil && ready.isAvailable)
        #expect(ready.statusText == "Bluetooth ready (hci1)")
        #expect(
            ready.json.serialized
                == #"{"available":true,"problem":null,"adapter":"hci1","adapter_present":true,"powered":true,"bluez_owner":":1.4","last_error":"gone"}"#
        )
    }

    @Test func healthCarriesTheBluetoothMember() {
        let health = HealthSnapshot(
            uptime: .seconds(1), connections: 0, maxConnections: 5, outboxDepth: 0, oldestUnsentAge: nil, dropped: 0,
            reconnects: 0, published: 0, commands: 0, commandsRefused: 0, time: Date(timeIntervalSince1970: 0),
            bluetooth: BluetoothHealth(adapter: "hci0", lastError: "no bus", problem: .busUnavailable))
        #expect(health.json["bluetooth"]?["available"] == false)
        #expect(health.json["bluetooth"]?["problem"] == "bus_unavailable")
        #expect(health.json.serialized.hasSuffix(#","ts":"1970-01-01T00:00:00.000Z"}"#))
    }
}
