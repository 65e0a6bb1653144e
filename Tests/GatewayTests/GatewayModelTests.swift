import Bluetooth
import Configuration
import Foundation
import Gateway
import Testing

@Suite struct GatewayModelTests {
    static func repositoryConfiguration() throws -> BridgeConfiguration {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try ConfigurationLoader().load(path: root.appendingPathComponent("config.json").path)
    }

    @Test func theSampleConfigurationBecomesPolicyAndPoolSpecs() throws {
        let model = GatewayModel(configuration: try Self.repositoryConfiguration())
        let policy = model.commandPolicy
        #expect(policy.rawGATTEnabled == false)
        #expect(policy.defaultRate == 10)
        let lamp = try #require(policy.devices["lamp"])
        #expect(lamp.rate == 5)
        #expect(
            lamp.command(named: "brightness")?.format
                == ValueFormat(.uint8, minimum: 0, maximum: 100, maximumLength: 512))
        #expect(lamp.command(named: "alert_level")?.writeType == .withoutResponse)
        #expect(lamp.readTargets["battery"] == CharacteristicTarget(BluetoothUUID(UInt16(0x2A19))))
        #expect(lamp.readTargets["battery_level"] == CharacteristicTarget(BluetoothUUID(UInt16(0x2A19))))
        #expect(lamp.rawAllow.isEmpty == false)
        let specs = Dictionary(uniqueKeysWithValues: model.schedulerSpecs.map { ($0.id, $0) })
        #expect(
            specs["hr_strap"]
                == .init(
                    id: "hr_strap", mode: .keepConnected, pollInterval: .seconds(600), silenceTimeout: .seconds(30)))
        #expect(specs["bthome"]?.mode == .passive)
        #expect(model.topics.set("lamp") == "blebridge/lamp/set")
        #expect(model.controlDiscovery["lamp"]?.count == 3)
    }

    @Test func reloadDiffNamesChangedRemovedAndAddedDevices() throws {
        let old = try Self.repositoryConfiguration()
        var new = old
        new.devices.removeAll { $0.id == "ibeacon" }
        new.devices[0].name = "Renamed strap"
        new.devices.append(
            DeviceConfiguration(id: "extra", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:09"))))
        let diff = GatewayModel.changes(from: old, to: new)
        #expect(diff.changed == ["hr_strap"])
        #expect(diff.removed == ["ibeacon"])
        #expect(diff.added == ["extra"])
    }
}
