import Foundation

/// A process that owns `org.bluez` on a test bus with `argv[0]` `<temporary directory>/bluetoothd`,
/// for the bluetoothd version probe: that path is a bash script which, given `--version`, prints
/// `versionOutput` (after `versionDelay` seconds), and otherwise `exec -a`s itself into
/// `blebridge simulate --bus` (the real simulator, keeping the script's path as its `argv[0]`).
package final class FakeBluetoothd: Sendable {
    package let directory: TemporaryDirectory
    /// The script's path: the `argv[0]` the probe finds.
    package let path: String
    package let process: ChildProcess

    /// Starts it on `busAddress` with `scenario` (a built-in scenario's name or a JSON text) and
    /// waits until the simulator owns `org.bluez`. `mode` is the script's file mode.
    package init(
        busAddress: String, versionOutput: String = "5.70", versionDelay: Int = 0, mode: Int = 0o755,
        scenario: String = "demo"
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "fake-bluetoothd")
        let scenarioArgument: String
        if scenario.hasPrefix("{") {
            scenarioArgument = try directory.write("scenario.json", scenario).path
        } else {
            scenarioArgument = scenario
        }
        let binary = try BinaryLocator.blebridge()
        let script = try directory.write(
            "bluetoothd",
            """
            #!/bin/bash
            if [ "$1" = --version ]; then
                sleep \(versionDelay)
                printf '%s\\n' '\(versionOutput)'
                exit 0
            fi
            exec -a "$0" '\(binary)' simulate --bus '\(busAddress)' --scenario '\(scenarioArgument)'

            """)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: script.path)
        let process = try ChildProcess(script.path, [])
        guard await process.waitForOutput(timeout: .seconds(20), { $0.contains("Press Ctrl-C") }) else {
            await process.stop()
            throw FixtureError("the fake bluetoothd did not start: \(process.standardOutput)\(process.standardError)")
        }
        self.directory = directory
        self.path = script.path
        self.process = process
    }

    /// Interrupts the simulator (SIGINT: it releases `org.bluez` and exits).
    package func stop() async {
        process.signal(SIGINT)
        if await process.waitForExit(timeout: .seconds(10)) == nil { await process.stop() }
    }
}
