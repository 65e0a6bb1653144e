import Bluetooth
import Configuration
import Foundation
import TestSupport
import Testing

/// The repository's `config.json` loads and says what the demo scenario needs.
@Suite struct SampleConfigurationTests {
    let configuration: BridgeConfiguration

    init() throws {
        configuration = try ConfigurationLoader().load(path: RepositoryFiles.sampleConfiguration)
    }

    @Test func hasTheFiveDemoDevicesWithTheirAddresses() {
        #expect(configuration.devices.map(\.id) == ["hr_strap", "thermometer", "bthome", "ibeacon", "lamp"])
        #expect(configuration.devices.map { $0.match.address?.string } == (1...5).map { "C0:FF:EE:00:00:0\($0)" })
        #expect(configuration.device(id: "bthome")?.connection == .passive)
        #expect(configuration.device(id: "bthome")?.advertisement?.decoder == "bthome")
        #expect(configuration.device(id: "ibeacon")?.advertisement?.decoder == "ibeacon")
    }

    @Test func resolvesCharacteristicNamesAndModes() throws {
        let strap = try #require(configuration.device(id: "hr_strap"))
        #expect(strap.subscribe[0].characteristic == BluetoothUUID(UInt16(0x2A37)))
        #expect(strap.subscribe[0].mode == .notify)
        #expect(strap.subscribe[0].silenceTimeout == .seconds(30))
        #expect(strap.subscribe[1].characteristic == BluetoothUUID(UInt16(0x2A19)))
        #expect(strap.subscribe[1].mode == .read)
        #expect(strap.subscribe[1].interval == .seconds(600))
    }

    @Test func allowsTheLampCommandsWithTheirBounds() throws {
        let lamp = try #require(configuration.device(id: "lamp"))
        #expect(lamp.commands.map(\.name) == ["power", "brightness", "alert_level"])
        let brightness = try #require(lamp.command(named: "brightness"))
        #expect(brightness.characteristic == BluetoothUUID("6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b"))
        #expect(brightness.acceptedRange == 0...100)
        #expect(brightness.operations == [.read, .write, .notify])
        let alert = try #require(lamp.command(named: "alert_level"))
        #expect(alert.characteristic == BluetoothUUID(UInt16(0x2A06)))
        #expect(alert.writeType == .withoutResponse)
        #expect(alert.format == .alertLevel)
        #expect(lamp.rateLimit == RateLimit(count: 5, period: .seconds(1)))
    }

    @Test func pointsAtALocalBrokerAndKeepsRawGATTOff() {
        #expect(configuration.mqtt.url == BrokerURL(host: "127.0.0.1", port: 1883))
        #expect(configuration.mqtt.baseTopic == "blebridge")
        #expect(configuration.commands.rawGATT.enabled == false)
        #expect(
            configuration.commands.rawGATT.allowedOperations(
                device: "lamp", characteristic: BluetoothUUID("6b1e0003-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
            ).isEmpty)
        #expect(configuration.warnings.isEmpty)
    }

    @Test func upTo64ConnectionsAreAcceptedWithAWarningAboveSeven() throws {
        let configuration = try ConfigurationLoader().decode(Data(#"{"bluetooth": {"max_connections": 64}}"#.utf8))
        #expect(configuration.bluetooth.maxConnections == 64)
        #expect(configuration.warnings.contains { $0.contains("stall beyond about 7") })
        let seven = try ConfigurationLoader().decode(Data(#"{"bluetooth": {"max_connections": 7}}"#.utf8))
        #expect(!seven.warnings.contains { $0.contains("stall") })
    }

    /// Issue 17: `"passive"` needs bluetoothd's experimental advertisement monitors and catches
    /// devices by their data only; `check-config` says so.
    @Test func passiveScanningNamesWhatItNeeds() throws {
        let passive = try ConfigurationLoader().decode(Data(#"{"bluetooth": {"scan": {"mode": "passive"}}}"#.utf8))
        #expect(passive.warnings.contains { $0.contains("bluetoothd -E") && $0.contains("stops at start") })
        let active = try ConfigurationLoader().decode(Data(#"{"bluetooth": {"scan": {"mode": "active"}}}"#.utf8))
        #expect(!active.warnings.contains { $0.contains("passive") })
    }

    @Test func everyDecoderNameIsCheckedWhenTheLoaderKnowsTheNames() throws {
        #expect(throws: Never.self) {
            try ConfigurationLoader(knownDecoders: ["bthome", "ibeacon"]).load(
                path: RepositoryFiles.sampleConfiguration)
        }
        let error = try requireThrows(ConfigurationError.self) {
            try ConfigurationLoader(knownDecoders: ["bthome"]).load(path: RepositoryFiles.sampleConfiguration)
        }
        #expect(error.keyPath == "devices[3].advertisement.decoder")
        #expect(error.message.contains("known decoders: bthome"))
    }
}
