import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// BlueZ's own client, `bluetoothctl`, driven through a pseudo-terminal over the simulator
/// (`Clients/bluetoothctl_session.py`: scan, info, connect, list-attributes, read, notify, write,
/// pair with its agent, disconnect) on the mirror of the VM capture's peripheral; its normalised
/// transcript must show the events real bluetoothd made it print
/// (`Reference/bluez-5.66/bluetoothctl.txt`, captured by `Tests/VM/capture-reference.sh`), in order.
@Suite struct BluetoothctlTranscriptTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let reference = here.deletingLastPathComponent().appendingPathComponent(
        "Reference/bluez-5.66/bluetoothctl.txt")
    static let session = here.deletingLastPathComponent().appendingPathComponent("Clients/bluetoothctl_session.py")

    @Test func bluetoothctlPrintsWhatItPrintsAgainstBluetoothd() async throws {
        let scenario = try Scenario.decode(Data(RealBlueZFidelityTests.scenario.utf8)).accelerated(
            staleTimeout: .seconds(60))
        let output = try TemporaryDirectory(prefix: "bluetoothctl")
        let transcript = output.file("bluetoothctl.txt").path
        try await SimulatorOnBus.run(scenario, seed: 1) { _, bus in
            let run = try await ChildProcess.run(
                "/usr/bin/python3",
                [
                    Self.session.path, transcript, "00:AA:01:00:00:00", "00002a38-0000-1000-8000-00805f9b34fb",
                    "00002a37-0000-1000-8000-00805f9b34fb", "00002a39-0000-1000-8000-00805f9b34fb", "01",
                ], environment: bus.environment, timeout: .seconds(150))
            #expect(run.status == 0, "bluetoothctl session failed:\n\(run.stdout)\(run.stderr)")
        }
        let compare = try await ChildProcess.run(
            "/usr/bin/python3", [Self.session.path, "--compare", Self.reference.path, transcript], timeout: .seconds(30)
        )
        #expect(compare.status == 0, "\(compare.stdout)\(compare.stderr)")
    }
}
