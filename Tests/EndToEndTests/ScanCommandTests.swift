import Foundation
import TestSupport
import Testing

/// `blebridge scan` against `blebridge simulate` on a private dbus-daemon, both the built binary.
@Suite struct ScanCommandTests {
    @Test func listsSimulatedDevicesWithDecodedAdvertisements() async throws {
        let bus = try await DBusDaemonFixture()
        let binary = try BinaryLocator.blebridge()
        let simulator = try ChildProcess(binary, ["simulate", "--bus", bus.address])
        do {
            #expect(await simulator.waitForOutput(timeout: .seconds(20)) { $0.contains("Press Ctrl-C") })
            let result = try await ChildProcess.run(
                binary, ["scan", "--bus", bus.address, "--duration", "2", "--plain"], timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(#"C0:FF:EE:00:00:01"#))
            #expect(result.stdout.contains(#""Polar H10 SIM" services=180d,180f"#))
            #expect(result.stdout.contains("bthome packet_id="))
            #expect(result.stdout.contains("ibeacon uuid=\"e2c56db5-dffb-48d2-b060-d0f5a71096e0\""))

            let filtered = try await ChildProcess.run(
                binary, ["scan", "--bus", bus.address, "--duration", "1", "--service", "180d"], timeout: .seconds(30))
            #expect(filtered.status == 0)
            #expect(filtered.stdout.contains("Polar H10 SIM"))
            #expect(!filtered.stdout.contains("Lamp SIM"))
        } catch {
            Issue.record(error)
        }
        await simulator.stop()
        await bus.stop()
    }

    @Test func withoutBlueZItSaysWhatToDo() async throws {
        let bus = try await DBusDaemonFixture()
        let result = try await ChildProcess.run(
            try BinaryLocator.blebridge(), ["scan", "--bus", bus.address, "--duration", "1"], timeout: .seconds(30))
        #expect(result.status == 69)
        #expect(result.stderr.contains("Bluetooth is unsupported"))
        await bus.stop()
    }
}
