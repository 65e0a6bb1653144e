import Bluetooth
import Testing

@Suite struct GATTModelTests {
    @Test func propertiesRoundTripBlueZFlags() {
        let flags = ["read", "write-without-response", "notify", "encrypt-read", "some-future-flag"]
        let properties = CharacteristicProperties(bluezFlags: flags)
        #expect(properties == [.read, .writeWithoutResponse, .notify, .encryptRead])
        #expect(properties.bluezFlags == ["read", "write-without-response", "notify", "encrypt-read"])
        #expect(properties.canNotify)
        #expect(properties.requiresEncryption)
        #expect(!CharacteristicProperties([.read, .write]).canNotify)
        #expect(CharacteristicProperties([.indicate]).canNotify)
        #expect(CharacteristicProperties(bluezFlags: []) == [])
    }

    @Test func treeLookups() throws {
        let serviceID = GATTAttributeID("/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service000c")
        let charID = GATTAttributeID(serviceID.rawValue + "/char000d")
        let cccd = GATTDescriptor(
            id: GATTAttributeID(charID.rawValue + "/desc000f"), uuid: GATTDescriptor.clientCharacteristicConfiguration,
            characteristicID: charID)
        let heartRate = GATTCharacteristic(
            id: charID, uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.notify], serviceID: serviceID,
            descriptors: [cccd])
        let service = GATTService(
            id: serviceID, uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [heartRate],
            includedServiceIDs: [GATTAttributeID("/x/service0020")])
        #expect(service.characteristic(BluetoothUUID(UInt16(0x2A37))) == heartRate)
        #expect(service.characteristic(BluetoothUUID(UInt16(0x2A38))) == nil)
        #expect(heartRate.descriptor(BluetoothUUID(UInt16(0x2902))) == cccd)
        #expect(service.description == "primary service 180d")
        #expect(service.includedServiceIDs.count == 1)
    }

    @Test func writeTypes() {
        #expect(WriteType.withResponse.bluezType == "request")
        #expect(WriteType.withoutResponse.bluezType == "command")
        #expect(WriteType.withoutResponse.requiredProperty == .writeWithoutResponse)
    }

    @Test func maximumWriteLengthsFollowTheMTU() {
        #expect(ATTLimits.maximumWriteValueLength(mtu: 23, type: .withoutResponse) == 20)
        #expect(ATTLimits.maximumWriteValueLength(mtu: 247, type: .withoutResponse) == 244)
        #expect(ATTLimits.maximumWriteValueLength(mtu: 0, type: .withoutResponse) == 20)
        #expect(ATTLimits.maximumWriteValueLength(mtu: 9000, type: .withoutResponse) == 514)
        #expect(ATTLimits.maximumWriteValueLength(mtu: 23, type: .withResponse) == 512)
        #expect(ATTLimits.maximumNotificationLength(mtu: 185) == 182)
    }

    @Test func checkWriteRefusesLongValues() throws {
        try ATTLimits.checkWrite(length: 20, mtu: 23, type: .withoutResponse)
        // do/catch, not `let error = #expect(throws:)`: that returns the error only from Swift 6.1 on.
        do {
            try ATTLimits.checkWrite(length: 21, mtu: 23, type: .withoutResponse)
            Issue.record("a 21-byte write without response fitted into an MTU of 23")
        } catch {
            #expect(error.code == .invalidValueLength)
        }
        #expect(throws: BluetoothError.self) { try ATTLimits.checkWrite(length: 513, mtu: 517, type: .withResponse) }
    }

    @Test func fragmentsSplitAndJoinBack() throws {
        let value = (0..<50).map { UInt8($0) }
        let pieces = try ATTLimits.fragments(of: value, maximumLength: 20)
        #expect(pieces.map(\.count) == [20, 20, 10])
        #expect(pieces.flatMap { $0 } == value)
        #expect(try ATTLimits.fragments(of: [], maximumLength: 20) == [[]])
        #expect(try ATTLimits.fragments(of: [1, 2], maximumLength: 2) == [[1, 2]])
        #expect(throws: BluetoothError.self) { try ATTLimits.fragments(of: value, maximumLength: 0) }
    }
}
