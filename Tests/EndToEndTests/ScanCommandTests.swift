import Foundation
import TestSupport
import Testing

/// `blebridge scan` against `blebridge simulate` on a private dbus-daemon, both the built binary.
@Suite struct ScanCommandTests {
    /// Runs `body` with `blebridge simulate` serving a private bus; stops both afterwards.
    private func withSimulator(_ body: (_ binary: String, _ bus: String) async throws -> Void) async throws {
        let bus = try await DBusDaemonFixture()
        let binary = try BinaryLocator.blebridge()
        let simulator = try ChildProcess(binary, ["simulate", "--bus", bus.address])
        do {
            #expect(await simulator.waitForOutput(timeout: .seconds(20)) { $0.contains("Press Ctrl-C") })
            try await body(binary, bus.address)
        } catch {
            Issue.record(error)
        }
        await simulator.stop()
        await bus.stop()
    }

    @Test func listsSimulatedDevicesWithDecodedAdvertisements() async throws {
        try await withSimulator { binary, bus in
            let result = try await ChildProcess.run(
                binary, ["scan", "--bus", bus, "--duration", "2s", "--plain"], timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(#"C0:FF:EE:00:00:01"#))
            #expect(result.stdout.contains(#""Polar H10 SIM" services=180d,180f"#))
            #expect(result.stdout.contains("bthome packet_id="))
            #expect(result.stdout.contains("ibeacon uuid=\"e2c56db5-dffb-48d2-b060-d0f5a71096e0\""))

            let filtered = try await ChildProcess.run(
                binary, ["scan", "--bus", bus, "--duration", "1s", "--service", "180d"], timeout: .seconds(30))
            #expect(filtered.status == 0)
            #expect(filtered.stdout.contains("Polar H10 SIM"))
            #expect(!filtered.stdout.contains("Lamp SIM"))
        }
    }

    /// Issue 17: each line names the decoder that recognises the device, and `--config` ends with a
    /// `{"devices": [...]}` that config.json accepts, one entry per recognised fixed address.
    @Test func namesTheDecoderAndPrintsAConfiguration() async throws {
        try await withSimulator { binary, bus in
            let result = try await ChildProcess.run(
                binary, ["scan", "--bus", bus, "--duration", "3s", "--plain", "--config"], timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("C0:FF:EE:00:00:03"), "\(result.stdout)")
            #expect(result.stdout.contains(" decoder=bthome bthome packet_id="), "\(result.stdout)")
            #expect(result.stdout.contains(" decoder=ibeacon "), "\(result.stdout)")
            let last = try #require(result.stdout.split(separator: "\n").last)
            let file = try TemporaryDirectory(prefix: "scan-config")
            let path = file.file("config.json").path
            try Data(last.utf8).write(to: URL(fileURLWithPath: path))
            let check = try await ChildProcess.run(binary, ["check-config", path], timeout: .seconds(30))
            #expect(check.status == 0, "\(last)\n\(check.stdout)\(check.stderr)")
            let parsed = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
            let devices = parsed?["devices"] as? [[String: Any]] ?? []
            #expect(devices.compactMap { $0["id"] as? String }.contains("bthome_000003"), "\(last)")
        }
    }

    /// `--bind-key ADDRESS=KEY`: an encrypted device is decoded and its `--config` entry carries the
    /// key (the Victron scenario's SmartShunt); without the key it is not recognised at all.
    @Test func aBindKeyDecryptsAndGoesIntoTheConfiguration() async throws {
        let bus = try await DBusDaemonFixture()
        let binary = try BinaryLocator.blebridge()
        let simulator = try ChildProcess(binary, ["simulate", "--bus", bus.address, "--scenario", "victron"])
        do {
            #expect(await simulator.waitForOutput(timeout: .seconds(20)) { $0.contains("Press Ctrl-C") })
            let key = "0df4d0617b6c4e1b9d3f1a2b3c4d5e6f"
            let result = try await ChildProcess.run(
                binary,
                [
                    "scan", "--bus", bus.address, "--duration", "3s", "--plain", "--config", "--bind-key",
                    "C0:FF:EE:17:03:02=\(key)",
                ], timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains(" decoder=victron victron model=\"Battery Monitor\""), "\(result.stdout)")
            let last = try #require(result.stdout.split(separator: "\n").last)
            let parsed = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
            let devices = parsed?["devices"] as? [[String: Any]] ?? []
            #expect(devices.count == 1, "only the device with its key is recognised: \(last)")
            let advertisement = devices.first?["advertisement"] as? [String: Any]
            #expect(devices.first?["id"] as? String == "victron_170302", "\(last)")
            #expect(advertisement?["bind_key"] as? String == key, "\(last)")
            let bad = try await ChildProcess.run(
                binary, ["scan", "--bind-key", "C0:FF:EE:17:03:02"], timeout: .seconds(30))
            #expect(bad.status == 64, "\(bad.stderr)")
            #expect(bad.stderr.contains("expected ADDRESS=KEY"), "\(bad.stderr)")
        } catch {
            Issue.record(error)
        }
        await simulator.stop()
        await bus.stop()
    }

    /// On a terminal (a pty from `script`): redrawn in place (cursor up, lines cleared to their
    /// end), never a full-screen clear; strongest first; "device" and "devices" as they should be.
    @Test func onATerminalTheTableIsRedrawnInPlaceStrongestFirst() async throws {
        try await withSimulator { binary, bus in
            let result = try await ChildProcess.run(
                "script", ["-qfec", "\(binary) scan --bus \(bus) --duration 2s", "/dev/null"],
                timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            let output = result.stdout
            #expect(!output.contains("\u{1B}[2J"), "no full-screen clear")
            #expect(!output.contains("\u{1B}[H"), "no jump to the top of the screen")
            #expect(output.contains("\u{1B}[K"))
            // The last frame: after the last cursor-up.
            var last = Substring(output)
            var redraws = 0
            while let up = last.range(of: "\u{1B}\\[\\d+A", options: .regularExpression) {
                last = last[up.upperBound...]
                redraws += 1
            }
            #expect(redraws >= 1, "redrawn at least once")
            // The pty turns "\n" into "\r\n" (one Character in Swift): drop the "\r" first.
            let lines = last.replacingOccurrences(of: "\r", with: "").components(separatedBy: "\n").map {
                $0.replacingOccurrences(of: "\u{1B}[K", with: "")
            }
            let header = try #require(lines.first { $0.hasPrefix("blebridge scan: ") })
            let count = try #require(Int(header.split(separator: " ")[2]))
            #expect(header.contains(count == 1 ? " 1 device " : " \(count) devices "))
            let strengths = lines.compactMap { line -> Int? in
                guard let range = line.range(of: #" -?\d+ dBm"#, options: .regularExpression) else { return nil }
                return Int(line[range].dropFirst().dropLast(4))
            }
            #expect(strengths.count == count, "\(lines)")
            #expect(strengths == strengths.sorted(by: >), "strongest first: \(strengths)")
        }
    }

    @Test func durationsTakeTheSameFormsAsTheConfiguration() async throws {
        let result = try await ChildProcess.run(
            try BinaryLocator.blebridge(), ["scan", "--duration", "5"], timeout: .seconds(20))
        #expect(result.status == 64)
        #expect(result.stderr.contains("--duration 5: expected a number followed by ms, s, m, h or d"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func withoutBlueZItSaysWhatToDo() async throws {
        let bus = try await DBusDaemonFixture()
        let result = try await ChildProcess.run(
            try BinaryLocator.blebridge(), ["scan", "--bus", bus.address, "--duration", "1s"], timeout: .seconds(30))
        #expect(result.status == 69)
        #expect(result.stderr.contains("Bluetooth is unsupported"))
        await bus.stop()
    }
}
