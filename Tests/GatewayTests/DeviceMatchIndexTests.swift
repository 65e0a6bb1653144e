import Bluetooth
import Configuration
import Testing

@testable import Gateway

/// Which device an advertiser is, through the index: the same answers as two passes over the
/// configuration (a device whose match names the address first, then the first other match).
@Suite struct DeviceMatchIndexTests {
    static let strap = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let sensor = BluetoothAddress("A4:C1:38:8D:18:B2")!
    static let environmental = BluetoothUUID("181a")!

    static let byName = DeviceConfiguration(id: "by_name", match: DeviceMatch(namePrefix: "ATC_"), connection: .passive)
    static let byService = DeviceConfiguration(
        id: "by_service", match: DeviceMatch(service: environmental), connection: .passive)
    static let strapNamed = DeviceConfiguration(
        id: "strap_named", match: DeviceMatch(address: strap, namePrefix: "Polar"), connection: .passive)
    static let strapAny = DeviceConfiguration(id: "strap_any", match: DeviceMatch(address: strap), connection: .passive)
    static let index = DeviceMatchIndex([byName, byService, strapNamed, strapAny])

    @Test func aMatchNamingTheAddressComesBeforeEarlierMatchesWithoutOne() {
        // by_name is listed first and holds too, but strap_any names the address.
        #expect(Self.index.deviceID(address: Self.strap, name: "ATC_1", services: []) == "strap_any")
        // Of the two naming it, the first whose every criterion holds.
        #expect(Self.index.deviceID(address: Self.strap, name: "Polar H10", services: []) == "strap_named")
    }

    @Test func otherwiseTheFirstMatchWithoutAnAddressInConfigurationOrder() {
        #expect(
            Self.index.deviceID(address: Self.sensor, name: "ATC_8D18B2", services: [Self.environmental]) == "by_name")
        #expect(Self.index.deviceID(address: Self.sensor, name: nil, services: [Self.environmental]) == "by_service")
        #expect(Self.index.deviceID(address: Self.sensor, name: "Thermometer", services: []) == nil)
        #expect(Self.index.deviceID(address: nil, name: "ATC_1", services: []) == "by_name")
    }

    @Test func theAddressTypeTakesNoPartAsInTheMatch() {
        let random = BluetoothAddress(bytes: Self.strap.bytes, type: .random)!
        #expect(Self.index.deviceID(address: random, name: nil, services: []) == "strap_any")
        #expect(Self.strapAny.match.matches(address: random, name: nil, services: []))
    }

    @Test func devicesByIdAreTheFirstWithThatId() {
        let twice = DeviceMatchIndex([
            Self.byName, DeviceConfiguration(id: "by_name", match: DeviceMatch(address: Self.sensor)),
        ])
        #expect(twice.device(id: "by_name")?.match == Self.byName.match)
        #expect(twice.device(id: "strap_any") == nil)
        #expect(Self.index.device(id: "strap_any")?.match == Self.strapAny.match)
    }
}
