import Foundation
import TestSupport
import Testing

/// `blebridge simulate` as a user runs it: the release/debug binary alone, built-in scenarios embedded.
@Suite struct SimulateCommandTests {
    @Test func runsOnAPrivateBusUntilInterrupted() async throws {
        let binary = try BinaryLocator.blebridge()
        let simulate = try ChildProcess(binary, ["simulate", "--scenario", "demo"])
        // Always interrupt it (never leave it to SIGKILL, which would orphan its dbus-daemon).
        do {
            let started = await simulate.waitForOutput(timeout: .seconds(20)) { $0.contains("Press Ctrl-C") }
            #expect(started, "\(simulate.standardOutput)\(simulate.standardError)")
            let line = simulate.standardOutput.split(separator: "\n").first {
                $0.hasPrefix("export DBUS_SYSTEM_BUS_ADDRESS=")
            }
            let address = try #require(line).split(separator: "'")[1]
            let devices = try await ChildProcess.run(
                "busctl",
                [
                    "--address=\(address)", "call", "io.blebridge.Simulator", "/io/blebridge/Simulator",
                    "io.blebridge.Simulator1", "ListDevices",
                ])
            #expect(devices.stdout.contains("\"C0:FF:EE:00:00:05\""), "\(devices.stderr)")
            let powered = try await ChildProcess.run(
                "busctl",
                [
                    "--address=\(address)", "get-property", "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1",
                    "Powered",
                ])
            #expect(powered.stdout == "b true\n", "\(powered.stderr)")
        } catch {
            Issue.record(error)
        }
        simulate.signal(SIGINT)
        #expect(await simulate.waitForExit(timeout: .seconds(10)) == 0)
        #expect(simulate.standardOutput.contains("stopped"))
    }

    @Test func malformedScenarioExitsWithTheKeyPath() async throws {
        let directory = try TemporaryDirectory(prefix: "scenario")
        let file = try directory.write(
            "bad.json", #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "zz"}]}]}"#)
        let result = try await ChildProcess.run(try BinaryLocator.blebridge(), ["simulate", "--scenario", file.path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("devices[0].services[0].uuid"), "\(result.stderr)")
        let unknown = try await ChildProcess.run(try BinaryLocator.blebridge(), ["simulate", "--scenario", "nope"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("demo"))
    }
}
