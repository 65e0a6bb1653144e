import BlueZSimulator
import Foundation
import TestSupport
import Testing

/// Replays, against the simulator, the probe that recorded real bluetoothd 5.66's answers in the
/// VM (`Reference/bluez-5.66/errors.jsonl`, made by `Tests/VM/guest/capture-reference.sh`), on a
/// simulated device with the same GATT database as the VM's peripheral, and compares every
/// answer: success or failure, error name and message. Any divergence between the simulator
/// and real BlueZ fails here, on every CI run, without a VM.
@Suite struct RealBlueZFidelityTests {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let reference = here.deletingLastPathComponent().appendingPathComponent("Reference/bluez-5.66/errors.jsonl")
    static let driver = here.appendingPathComponent("drive_probe.py")
    static let probe = here.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VM/guest/probe_errors.py")

    /// The peripheral of the capture as the VM's central saw it: bluetoothd's own GATT and Device
    /// Information services, then BlueZ's example GATT server (bluez-test-scripts' example-gatt-server:
    /// heart rate, battery, and its test service). The peer's answers that its application decides
    /// are the scenario's: a notify-only characteristic's read and write reach the application, which
    /// answers NotSupported (`read_error`, `write_error`); the battery and test characteristics ignore
    /// the read offset; the control point takes exactly one byte; the test descriptor refuses writes
    /// with NotSupported, the user description accepts them (writable auxiliaries); the peer refused
    /// a 512-byte write to the test characteristic with Invalid Length (measured), so its limit is 511.
    /// It advertises TxPower 0 (the discovered object's) and notifies a heart rate every second, as
    /// the example does; its PnP ID gives bluetoothd's `Modalias` (usb:v1D6Bp0246d0542).
    static let scenario = """
        {
          "name": "bluez-reference",
          "description": "Mirror of the capture's peripheral: bluetoothd 5.66 serving BlueZ's example GATT server.",
          "devices": [
            {"id": "reference", "address": "00:AA:01:00:00:00", "name": "BlueZ 5.66", "rssi": -40, "tx_power": 0,
             "services": [
               {"uuid": "1801", "characteristics": [
                 {"uuid": "2a05", "flags": ["indicate"], "value": "00000000"},
                 {"uuid": "2b29", "flags": ["read", "write"], "value": "07", "max_length": 1},
                 {"uuid": "2b2a", "flags": ["read"], "value": "200374979d4e860d870d74225977e0ea"},
                 {"uuid": "2b3a", "flags": ["read"], "value": "01"}
               ]},
               {"uuid": "180a", "characteristics": [
                 {"uuid": "2a50", "flags": ["read"], "value": "026b1d46024205"}
               ]},
               {"uuid": "180d", "characteristics": [
                 {"uuid": "2a37", "flags": ["notify"], "value": "0664", "generator": {"kind": "heart_rate"},
                  "read_error": "request-not-supported", "write_error": "request-not-supported"},
                 {"uuid": "2a38", "flags": ["read"], "value": "01", "read_ignores_offset": true},
                 {"uuid": "2a39", "flags": ["write"], "value": "00", "min_length": 1, "max_length": 1,
                  "read_error": "read-not-permitted"}
               ]},
               {"uuid": "180f", "characteristics": [
                 {"uuid": "2a19", "flags": ["read", "notify"], "value": "64", "read_ignores_offset": true}
               ]},
               {"uuid": "12345678-1234-5678-1234-56789abcdef0", "characteristics": [
                 {"uuid": "12345678-1234-5678-1234-56789abcdef1",
                  "flags": ["read", "write", "extended-properties", "writable-auxiliaries"], "value": "",
                  "read_ignores_offset": true, "max_length": 511,
                  "descriptors": [
                    {"uuid": "2900", "value": "0200"},
                    {"uuid": "12345678-1234-5678-1234-56789abcdef2", "text": "Test",
                     "write_error": "request-not-supported"},
                    {"uuid": "2901", "text": "This is a characteristic for testing", "writable": true}
                  ]},
                 {"uuid": "12345678-1234-5678-1234-56789abcdef3", "flags": ["read", "write"], "value": "",
                  "requires_pairing": true,
                  "descriptors": [{"uuid": "12345678-1234-5678-1234-56789abcdef4", "value": ""},
                                  {"uuid": "2901", "text": "Encrypted"}]},
                 {"uuid": "12345678-1234-5678-1234-56789abcdef5", "flags": ["read", "write"], "value": "",
                  "requires_pairing": true,
                  "descriptors": [{"uuid": "12345678-1234-5678-1234-56789abcdef6", "value": ""},
                                  {"uuid": "2901", "text": "Secure"}]}
               ]}
             ]}
          ]
        }
        """

    /// Answers that depend on the remote device's own GATT server, not on BlueZ: excluded, with why.
    static let remoteSpecific: [String: String] = [
        "char 00002b29-0000-1000-8000-00805f9b34fb flags=read,write WriteValue request":
            "the remote server rejects this value with ATT 0x13 (Client Supported Features semantics)",
        "desc 12345678-1234-5678-1234-56789abcdef2 of 12345678-1234-5678-1234-56789abcdef1 ReadValue":
            "the example application's reply to this read fails in bluetoothd's server (ATT 0x0e, Unlikely Error)",
    ]

    /// Successful calls whose reply text is compared too (others: success only).
    static let repliesCompared: Set<String> = [
        "GetDiscoveryFilters", "Get Pairable after Set", "Get Discoverable after Set", "Get DiscoverableTimeout",
    ]

    struct Answer: Equatable, CustomStringConvertible {
        var outcome: String
        var description: String { outcome }
    }

    static func answers(_ jsonl: String) throws -> [(label: String, answer: Answer)] {
        try jsonl.split(separator: "\n").map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            let label = object["label"] as? String ?? ""
            let outcome: String
            if let error = object["error"] as? String {
                outcome = "\(error): \(object["message"] as? String ?? "")"
            } else if object["client_error"] != nil {
                outcome = "client-side error"
            } else if label == "Introspect wrong signature" {
                // libdbus's own document: child nodes (numbered by handle, which differ) but no interfaces.
                let reply = object["reply"] as? String ?? ""
                outcome = reply.contains("<interface") ? "ok, with interfaces" : "ok, child nodes only"
            } else if Self.repliesCompared.contains(label) {
                outcome = "ok \(object["reply"] as? String ?? "")"
            } else {
                outcome = "ok"
            }
            return (label, Answer(outcome: outcome))
        }
    }

    @Test func simulatorAnswersLikeRealBluetoothd() async throws {
        let expected = try Self.answers(String(contentsOf: Self.reference, encoding: .utf8))
        #expect(expected.count > 80, "the reference holds \(expected.count) answers")

        let scenario = try Scenario.decode(Data(Self.scenario.utf8)).accelerated()
        let output = try TemporaryDirectory(prefix: "fidelity")
        let outFile = output.file("simulator.jsonl").path
        try await SimulatorOnBus.run(scenario, seed: 1) { _, bus in
            let run = try await ChildProcess.run(
                "/usr/bin/python3", [Self.driver.path, Self.probe.path, outFile, "BlueZ 5.66"],
                environment: bus.environment, timeout: .seconds(90))
            #expect(run.status == 0, "probe driver failed:\n\(run.stdout)\(run.stderr)")
        }

        let actual = try Self.answers(String(contentsOfFile: outFile, encoding: .utf8))
        var actualByLabel: [String: Answer] = [:]
        for (label, answer) in actual { actualByLabel[label] = answer }
        var differences: [String] = []
        for (label, answer) in expected where Self.remoteSpecific[label] == nil {
            guard let simulated = actualByLabel[label] else {
                differences.append("\(label): not answered by the simulator")
                continue
            }
            if simulated != answer {
                differences.append("\(label):\n    bluetoothd: \(answer)\n    simulator:  \(simulated)")
            }
        }
        #expect(
            differences.isEmpty, "simulator differs from real bluetoothd 5.66:\n\(differences.joined(separator: "\n"))")
    }
}
