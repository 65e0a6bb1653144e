import Bluetooth
import Configuration
import Foundation
import Testing

@testable import Gateway

/// `auto_devices`: ids, the bound with least-recently-seen eviction, and the expansion.
@Suite struct AutoDevicesTests {
    static let on = BridgeConfiguration(autoDevices: AutoDeviceSettings(enabled: true, maxDevices: 2))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The devices behind a reference, so `#expect` can call the mutating methods.
    final class Box {
        var devices = AutoDevices()
        func add(_ address: String, _ decoder: String, at seconds: Double, maximum: Int = 2) -> (String, [String])? {
            devices.add(
                BluetoothAddress(address)!, decoder: decoder, at: AutoDevicesTests.start.addingTimeInterval(seconds),
                maximum: maximum, configuration: AutoDevicesTests.on
            ).map { ($0.id, $0.evicted) }
        }
    }

    @Test func idsAreTheDecoderAndTheLastThreeAddressBytes() {
        #expect(AutoDevices.id(decoder: "bthome", address: BluetoothAddress("A4:C1:38:CF:01:56")!) == "bthome_cf0156")
        let box = Box()
        #expect(box.add("A4:C1:38:CF:01:56", "bthome", at: 0)?.0 == "bthome_cf0156")
        let expanded = box.devices.expand(Self.on)
        let device = expanded.device(id: "bthome_cf0156")
        #expect(device != nil)
        #expect(device?.name == "bthome CF0156")
        #expect(device?.connection == .passive)
        #expect(device?.match == DeviceMatch(address: BluetoothAddress("A4:C1:38:CF:01:56")))
        #expect(device?.advertisement == AdvertisementSettings(decoder: "bthome"))
        #expect(box.devices.expand(BridgeConfiguration()).devices.isEmpty, "nothing when auto_devices is off")
    }

    @Test func beyondTheMaximumTheDeviceSeenLeastRecentlyGoes() {
        let box = Box()
        _ = box.add("A4:C1:38:00:00:01", "bthome", at: 0)
        _ = box.add("A4:C1:38:00:00:02", "pvvx", at: 1)
        box.devices.seen("bthome_000001", at: Self.start.addingTimeInterval(5))
        let third = box.add("A4:C1:38:00:00:03", "bthome", at: 6)
        #expect(third?.1 == ["pvvx_000002"], "pvvx_000002 was seen least recently")
        #expect(box.devices.entries.keys.sorted() == ["bthome_000001", "bthome_000003"])
        #expect(box.devices.evictions == 1)
    }

    @Test func configuredDevicesWin() {
        let configured = DeviceConfiguration(
            id: "bthome_000001", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:09")),
            connection: .passive)
        var configuration = Self.on
        configuration.devices = [configured]
        var devices = AutoDevices()
        #expect(
            devices.add(
                BluetoothAddress("A4:C1:38:00:00:01")!, decoder: "bthome", at: Self.start, maximum: 5,
                configuration: configuration) == nil,
            "a configured device has that id")
        _ = devices.add(
            BluetoothAddress("C0:FF:EE:00:00:09")!, decoder: "ibeacon", at: Self.start, maximum: 5,
            configuration: BridgeConfiguration(autoDevices: AutoDeviceSettings(enabled: true)))
        #expect(devices.expand(configuration).devices.map(\.id) == ["bthome_000001"], "its address is configured")
    }

    @Test func anEncryptedAdvertiserGetsItsBindKey() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(
                #"{"auto_devices": {"enabled": true, "bind_keys": {"a4:c1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"}}}"#
                    .utf8))
        let address = BluetoothAddress("A4:C1:38:56:53:84")!
        let key = try #require(configuration.autoDevices.bindKey(for: address))
        #expect(key.count == 16 && key.first == 0x81)
        var devices = AutoDevices()
        _ = devices.add(address, decoder: "mibeacon", at: Self.start, maximum: 5, configuration: configuration)
        let device = devices.expand(configuration).device(id: "mibeacon_565384")
        #expect(device?.advertisement == AdvertisementSettings(decoder: "mibeacon", bindKey: key))
        for bad in [
            #"{"bind_keys": {"A4:C1:38:56:53": "814aac74c4f17b6c1581e1ab87816b99"}}"#,
            #"{"bind_keys": {"A4:C1:38:56:53:84": "814aac74"}}"#,
            #"{"bind_keys": {"A4:C1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99", "a4:c1:38:56:53:84": "814aac74c4f17b6c1581e1ab87816b99"}}"#,
            #"{"bind_keys": ["814aac74c4f17b6c1581e1ab87816b99"]}"#,
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ConfigurationLoader().decode(Data(("{\"auto_devices\": " + bad + "}").utf8))
            }
        }
    }

    @Test func theSwitchIsReadFromTheConfiguration() throws {
        let configuration = try ConfigurationLoader().decode(
            Data(#"{"auto_devices": {"enabled": true, "max_devices": 30}}"#.utf8))
        #expect(configuration.autoDevices == AutoDeviceSettings(enabled: true, maxDevices: 30))
        #expect(try ConfigurationLoader().decode(Data("{}".utf8)).autoDevices.enabled == false)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(#"{"auto_devices": {"max_devices": 0}}"#.utf8))
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader().decode(Data(#"{"auto_devices": {"enable": true}}"#.utf8))
        }
    }
}
