import Bluetooth
import Gateway
import Testing

@Suite struct ResolvedGATTTests {
    static let label = BluetoothUUID("6b1e0102-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let front = BluetoothUUID("6b1e0101-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let back = BluetoothUUID("6b1e0201-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
    static let battery = BluetoothUUID(UInt16(0x180F))

    static func characteristic(_ uuid: BluetoothUUID, _ path: String) -> GATTCharacteristic {
        GATTCharacteristic(
            id: GATTAttributeID(path), uuid: uuid, properties: [.read, .write], serviceID: GATTAttributeID("/s"))
    }

    /// The same characteristic UUID in two services, plus a battery service.
    static let gatt = ResolvedGATT(
        device: "panel",
        services: [
            (front, [characteristic(label, "/front/label")]),
            (back, [characteristic(label, "/back/label")]),
            (battery, [characteristic(BluetoothUUID(UInt16(0x2A19)), "/battery/level")]),
        ])

    @Test func theServicePicksBetweenCharacteristicsWithTheSameUUID() throws {
        #expect(
            try Self.gatt.find(CharacteristicTarget(Self.label, service: Self.back)).characteristic.id.description
                .contains("back"))
        #expect(try Self.gatt.find(CharacteristicTarget(Self.label, service: Self.front)).service == Self.front)
        // Without a service: the first service in the device's order that has it.
        #expect(try Self.gatt.find(CharacteristicTarget(Self.label)).service == Self.front)
    }

    @Test func aMissingServiceOrCharacteristicIsAClearError() {
        #expect {
            try Self.gatt.find(CharacteristicTarget(Self.label, service: Self.battery))
        } throws: { error in
            let failure = error as? CommandFailure
            return failure?.code == .bleError
                && failure?.message == "panel has no characteristic \(Self.label) in service 180f (battery)"
        }
        #expect {
            try Self.gatt.find(CharacteristicTarget(Self.label, service: BluetoothUUID(UInt16(0x181A))))
        } throws: { error in
            (error as? CommandFailure)?.message == "panel has no service 181a (environmental_sensing)"
        }
        #expect {
            try Self.gatt.find(CharacteristicTarget(BluetoothUUID(UInt16(0x2A1E))))
        } throws: { error in
            (error as? CommandFailure)?.message == "panel has no characteristic 2a1e (intermediate_temperature)"
        }
    }
}
