import Bluetooth
import Foundation
import Testing

@testable import BlueZSimulator

@Suite struct ScenarioTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/scenarios")

    @Test func everyBuiltInScenarioDecodes() throws {
        #expect(
            BuiltInScenarios.names == [
                "bthome", "commands", "demo", "discovery", "faults", "heart-rate", "hygrometers", "ibeacon", "lamp",
                "load", "mibeacon", "mopeka", "oralb", "pairing", "qingping", "scales", "sensorpush", "switchbot",
                "thermometer",
                "victron",
            ])
        for name in BuiltInScenarios.names {
            let scenario = try Scenario.load(name)
            #expect(scenario.name == name)
        }
    }

    @Test func embeddedScenariosAreIdenticalToTheDocsCopies() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.docs.path).filter { $0.hasSuffix(".json") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(BuiltInScenarios.names))
        for file in files {
            let text = try String(contentsOf: Self.docs.appendingPathComponent(file), encoding: .utf8)
            #expect(
                BuiltInScenarios.json(named: String(file.dropLast(5))).map { $0 + "\n" } == text,
                "\(file) differs; run scripts/embed-scenarios.sh")
        }
    }

    @Test func demoScenarioMatchesTheContract() throws {
        let demo = try Scenario.load("demo")
        let byID = Dictionary(uniqueKeysWithValues: demo.devices.map { ($0.id, $0) })
        #expect(demo.devices.map(\.id) == ["hr_strap", "thermometer", "bthome", "ibeacon", "lamp"])
        #expect(byID["hr_strap"]?.address.string == "C0:FF:EE:00:00:01")
        #expect(byID["hr_strap"]?.name == "Polar H10 SIM")
        #expect(byID["thermometer"]?.address.string == "C0:FF:EE:00:00:02")
        #expect(byID["thermometer"]?.name == "Thermo SIM")
        #expect(byID["bthome"]?.address.string == "C0:FF:EE:00:00:03")
        #expect(byID["bthome"]?.name == "BTHome SIM")
        #expect(byID["bthome"]?.connectable == false)
        #expect(byID["bthome"]?.advertisement.serviceData.first?.uuid == BluetoothUUID("fcd2"))
        #expect(byID["ibeacon"]?.address.string == "C0:FF:EE:00:00:04")
        #expect(byID["ibeacon"]?.name == nil)
        #expect(byID["ibeacon"]?.advertisement.manufacturerData.first?.company == 0x004C)
        #expect(byID["lamp"]?.address.string == "C0:FF:EE:00:00:05")
        #expect(byID["lamp"]?.name == "Lamp SIM")

        func characteristics(_ id: String, _ service: String) -> [String: Set<CharacteristicProperty>] {
            let services = byID[id]?.services ?? []
            let found = services.first { $0.uuid == BluetoothUUID(service) }?.characteristics ?? []
            return Dictionary(uniqueKeysWithValues: found.map { ($0.uuid.shortString, $0.properties) })
        }
        #expect(characteristics("hr_strap", "180d") == ["2a37": [.notify], "2a38": [.read]])
        #expect(characteristics("hr_strap", "180f") == ["2a19": [.read, .notify]])
        #expect(Set(characteristics("hr_strap", "180a").keys) == ["2a24", "2a25", "2a26", "2a27", "2a28", "2a29"])
        #expect(characteristics("thermometer", "1809") == ["2a1c": [.indicate], "2a1e": [.notify]])
        #expect(
            characteristics("thermometer", "181a") == [
                "2a6e": [.read, .notify], "2a6f": [.read, .notify], "2a6d": [.read, .notify],
            ])
        #expect(characteristics("thermometer", "180f") == ["2a19": [.read, .notify]])
        let suffix = "-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
        #expect(
            characteristics("lamp", "6b1e0001" + suffix) == [
                "6b1e0002" + suffix: [.read, .write, .writeWithoutResponse, .notify],
                "6b1e0003" + suffix: [.read, .write, .notify],
            ])
        #expect(characteristics("lamp", "1802") == ["2a06": [.writeWithoutResponse]])
        #expect(characteristics("lamp", "180f") == ["2a19": [.read, .notify]])
    }

    private func error(_ json: String) -> ScenarioError? {
        do {
            _ = try Scenario.decode(Data(json.utf8), source: "test.json")
            return nil
        } catch {
            return error
        }
    }

    @Test func secondAdapterDecodesAndNeedsItsOwnID() throws {
        let scenario = try Scenario.decode(
            Data(#"{"name": "x", "second_adapter": {"id": "hci1", "address": "00:1A:7D:DA:71:14"}}"#.utf8),
            source: "test.json")
        #expect(scenario.secondAdapter?.id == "hci1")
        #expect(scenario.secondAdapter?.address == "00:1A:7D:DA:71:14")
        #expect(try Scenario.load("demo").secondAdapter == nil)
        let same = error(#"{"name": "x", "second_adapter": {"id": "hci0"}}"#)
        #expect(same?.keyPath == "second_adapter")
    }

    @Test func unknownKeysAreRejectedWithTheirKeyPath() {
        let failure = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "180d", "characteristics": [{"uuid": "2a37", "flags": ["notify"], "intervall": 1}]}]}]}"#
        )
        #expect(failure?.code == .unknownKey)
        #expect(failure?.keyPath == "devices[0].services[0].characteristics[0].intervall")
        #expect(
            failure?.description.contains("test.json: at devices[0].services[0].characteristics[0].intervall") == true)
        #expect(failure?.message.contains("interval") == true)
    }

    @Test func badValuesNameTheKeyPathAndWhatIsAccepted() {
        let badUUID = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "18x"}]}]}"#)
        #expect(badUUID?.code == .invalidValue)
        #expect(badUUID?.keyPath == "devices[0].services[0].uuid")
        #expect(badUUID?.message.contains("UUID") == true)

        let badAddress = error(#"{"name": "x", "devices": [{"address": "C0:FF:EE"}]}"#)
        #expect(badAddress?.keyPath == "devices[0].address")

        let badFlag = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "180d", "characteristics": [{"uuid": "2a37", "flags": ["notfy"]}]}]}]}"#
        )
        #expect(badFlag?.keyPath == "devices[0].services[0].characteristics[0].flags")
        #expect(badFlag?.message.contains("write-without-response") == true)

        let badHex = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "180d", "characteristics": [{"uuid": "2a38", "flags": ["read"], "value": "0g"}]}]}]}"#
        )
        #expect(badHex?.keyPath == "devices[0].services[0].characteristics[0].value")

        let wrongType = error(#"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "rssi": "loud"}]}"#)
        #expect(wrongType?.code == .typeMismatch)
        #expect(wrongType?.keyPath == "devices[0].rssi")

        let missing = error(#"{"devices": []}"#)
        #expect(missing?.code == .missingKey)
        #expect(missing?.keyPath == "name")

        let badDuration = error(#"{"name": "x", "timing": {"stale_timeout": "soon"}}"#)
        #expect(badDuration?.keyPath == "timing.stale_timeout")
        #expect(badDuration?.message.contains("30s") == true)

        let wrongParameter = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "services": [{"uuid": "180f", "characteristics": [{"uuid": "2a19", "flags": ["read"], "generator": {"kind": "battery", "resting": 60}}]}]}]}"#
        )
        #expect(wrongParameter?.keyPath == "devices[0].services[0].characteristics[0].generator.resting")
        #expect(wrongParameter?.message.contains("drain_per_hour") == true)

        let duplicate = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01"}, {"address": "c0:ff:ee:00:00:01"}]}"#)
        #expect(duplicate?.keyPath == "devices[1].address")

        let passkeyMissing = error(
            #"{"name": "x", "devices": [{"address": "C0:FF:EE:00:00:01", "pairing": "passkey"}]}"#)
        #expect(passkeyMissing?.keyPath == "devices[0].passkey")
    }

    @Test func invalidJSONReportsWhere() {
        let failure = error("{\n  \"name\": \"x\",\n  \"devices\": [,]\n}")
        #expect(failure?.code == .invalidJSON)
        #expect(failure?.keyPath == "devices[0]")
        #expect(failure?.message.contains("line 3, column") == true, "\(String(describing: failure))")
    }

    /// The project's strict parser runs first (issue 20: one strict JSON toolkit): Foundation's
    /// decoder would take one of the two values silently.
    @Test func aDuplicateKeyIsRefusedWithItsPathAndPlace() {
        let failure = error("{\n  \"name\": \"x\",\n  \"devices\": [],\n  \"name\": \"y\"\n}")
        #expect(failure?.code == .duplicateKey)
        #expect(failure?.keyPath == "name")
        #expect(failure?.message.contains("line 4, column 3") == true, "\(String(describing: failure))")
    }

    @Test func loadingByNameOrPathReportsWhatIsMissing() throws {
        #expect(throws: ScenarioError.self) { try Scenario.load("no-such-scenario") }
        do {
            _ = try Scenario.load("no-such-scenario")
        } catch {
            #expect(error.code == .unknownScenario)
            #expect(error.message.contains("demo"))
        }
        do {
            _ = try Scenario.load("/nonexistent/dir/x.json")
        } catch {
            #expect(error.code == .fileNotFound)
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).json")
        try #"{"name": "mine", "devices": [{"address": "AA:BB:CC:DD:EE:FF", "name": "Mine"}]}"#.write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let scenario = try Scenario.load(file.path)
        #expect(scenario.devices.first?.name == "Mine")
        #expect(scenario.timing == ScenarioTiming())
    }
}
