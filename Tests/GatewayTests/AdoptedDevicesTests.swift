import Bluetooth
import Configuration
import Foundation
import JSON
import Testing

@testable import Gateway

/// `bridge/request/device/adopt` (``AdoptedDevices``): the checks, renaming and re-keying, the
/// expansion (a configured device wins), and the configuration snippet.
@Suite struct AdoptedDevicesTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let address = "A4:C1:38:CF:01:56"

    static func automatic() -> AutoDevices {
        var auto = AutoDevices()
        _ = auto.add(
            BluetoothAddress(address)!, decoder: "bthome", at: start, bound: DeviceBound(maximum: 5),
            configuration: BridgeConfiguration(autoDevices: AutoDeviceSettings(enabled: true)))
        return auto
    }

    static let running = BridgeConfiguration(
        devices: [DeviceConfiguration(id: "lamp", match: DeviceMatch(address: BluetoothAddress("C0:FF:EE:00:00:05")))],
        autoDevices: AutoDeviceSettings(enabled: true))

    @Test func adoptingChecksTheSourceTheIdAndKeepsTheDecoder() throws {
        let auto = Self.automatic()
        var adopted = AdoptedDevices()
        func code(_ device: String, _ id: String) -> CommandErrorCode? {
            if case .failure(let failure) = adopted.adoption(
                of: device, as: id, name: nil, bindKey: nil, automatic: auto, running: auto.expand(Self.running))
            {
                return failure.code
            }
            return nil
        }
        #expect(code("bthome_999999", "x") == .unknownDevice)
        #expect(code("lamp", "x") == .notAllowed, "a configured device is changed in the file")
        #expect(code("bthome_cf0156", "lamp") == .idTaken)
        #expect(code("bthome_cf0156", "bridge") == .invalidValue)
        #expect(code("bthome_cf0156", "a/b") == .invalidValue)
        let key = [UInt8](repeating: 7, count: 16)
        let adoption = try adopted.adoption(
            of: "bthome_cf0156", as: "kitchen", name: "Kitchen", bindKey: key, automatic: auto,
            running: auto.expand(Self.running)
        ).get()
        #expect(adoption.previousID == "bthome_cf0156")
        #expect(
            adoption.entry
                == AdoptedDevices.Entry(address: Self.address, decoder: "bthome", name: "Kitchen", bindKey: key))
        adopted.apply(adoption)
        var remaining = auto
        remaining.remove("bthome_cf0156")
        let expanded = remaining.expand(adopted.expand(Self.running))
        #expect(expanded.devices.map(\.id) == ["lamp", "kitchen"])
        let kitchen = try #require(expanded.device(id: "kitchen"))
        #expect(kitchen.match == DeviceMatch(address: BluetoothAddress(Self.address)))
        #expect(kitchen.advertisement == AdvertisementSettings(decoder: "bthome", bindKey: key))
        #expect(kitchen.connection == .passive && kitchen.name == "Kitchen")
        // Renamed again: keeps its key; the old id goes.
        let renamed = try adopted.adoption(
            of: "kitchen", as: "larder", name: nil, bindKey: nil, automatic: remaining, running: expanded
        ).get()
        #expect(renamed.entry.bindKey == key && renamed.entry.name == "larder")
        adopted.apply(renamed)
        #expect(adopted.entries.keys.sorted() == ["larder"])
    }

    @Test func aConfiguredDeviceWins() {
        let adopted = AdoptedDevices(entries: [
            "kitchen": AdoptedDevices.Entry(address: "C0:FF:EE:00:00:05", decoder: "bthome", name: "Kitchen"),
            "lamp": AdoptedDevices.Entry(address: "C0:FF:EE:00:00:09", decoder: "bthome", name: "Lamp"),
        ])
        #expect(adopted.expand(Self.running).devices.map(\.id) == ["lamp"], "address and id taken by config.json")
    }

    @Test func theSnippetIsADevicesEntry() throws {
        let snippet = AdoptedDevices.snippet(
            id: "kitchen", name: "Kitchen", address: Self.address, decoder: "mibeacon",
            bindKey: Hex.bytes("814aac74c4f17b6c1581e1ab87816b99"))
        let text = #"{"devices": ["# + snippet.serialized + "]}"
        let configuration = try ConfigurationLoader().decode(Data(text.utf8))
        let device = try #require(configuration.device(id: "kitchen"))
        #expect(device.name == "Kitchen")
        #expect(device.advertisement?.decoder == "mibeacon" && device.advertisement?.bindKey?.first == 0x81)
        #expect(device.match.address == BluetoothAddress(Self.address))
    }
}
