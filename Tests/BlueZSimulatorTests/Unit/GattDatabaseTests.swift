import Bluetooth
import Testing

@testable import BlueZSimulator

@Suite struct GattDatabaseTests {
    @Test func handlesAndPathsFollowBlueZ() throws {
        let strap = try #require(try Scenario.load("demo").devices.first)
        let database = GattDatabase(services: strap.services)
        // Generic Attribute first (GAP is claimed by bluetoothd and not exported), then the scenario's services.
        #expect(database.services.map(\.uuid.shortString) == ["1801", "180d", "180f", "180a"])
        #expect(database.services[0].pathComponent == "service0008")
        #expect(database.services[0].characteristics[0].pathComponent == "char0009")
        #expect(database.services[0].characteristics[0].descriptors.map(\.pathComponent) == ["desc000b"])
        let heartRate = database.services[1]
        #expect(heartRate.pathComponent == "service000c")
        #expect(heartRate.characteristics[0].pathComponent == "char000d")
        #expect(heartRate.characteristics[0].valueHandle == 0x000e)
        #expect(heartRate.characteristics[0].descriptors.map(\.pathComponent) == ["desc000f"])
        #expect(heartRate.characteristics[0].descriptors[0].uuid == BluetoothUUID(UInt16(0x2902)))
        #expect(heartRate.characteristics[1].pathComponent == "char0010")
        #expect(database.services[2].pathComponent == "service0012")
        #expect(database.characteristic(uuid: BluetoothUUID(UInt16(0x2a19))) == .init(service: 2, characteristic: 0))
        #expect(database.uuidStrings.contains("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(database.uuidStrings.contains("00001800-0000-1000-8000-00805f9b34fb"))
    }

    @Test func aDeclaredGenericAttributeServiceIsTheOnlyOne() {
        // The mirror of the VM's peripheral declares 1801 itself; the simulator had exported it twice
        // (bluetoothctl listed "Generic Attribute Profile" twice against it, once against bluetoothd).
        let database = GattDatabase(services: [
            ScenarioService(
                uuid: BluetoothUUID(UInt16(0x1801)),
                characteristics: [ScenarioCharacteristic(uuid: BluetoothUUID(UInt16(0x2b3a)), properties: [.read])]),
            ScenarioService(
                uuid: BluetoothUUID(UInt16(0x180f)),
                characteristics: [ScenarioCharacteristic(uuid: BluetoothUUID(UInt16(0x2a19)), properties: [.read])]),
        ])
        #expect(database.services.map(\.uuid.shortString) == ["1801", "180f"])
        #expect(database.services[0].characteristics.map(\.uuid.shortString) == ["2b3a"])
        #expect(database.services[0].pathComponent == "service0008")
    }

    @Test func flagsAreListedInBlueZOrder() {
        #expect(
            CharacteristicProperty.flags([.notify, .write, .read, .writeWithoutResponse, .reliableWrite])
                == ["read", "write-without-response", "write", "notify", "reliable-write"])
    }

    @Test func deviceWithoutServicesHasNoDatabase() {
        #expect(GattDatabase(services: []).services.isEmpty)
    }
}
