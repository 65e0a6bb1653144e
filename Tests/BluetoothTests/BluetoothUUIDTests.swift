import Bluetooth
import Testing

@Suite struct BluetoothUUIDTests {
    @Test func shortFormsEqualTheirFullForm() throws {
        let short = try #require(BluetoothUUID("180D"))
        let full = try #require(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb"))
        #expect(short == full)
        #expect(short == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID("0x180d") == short)
        #expect(BluetoothUUID("0000180D") == short)
        #expect(short.shortValue == 0x180D)
        #expect(short.description == "180d")
        #expect(full.uuidString == "0000180d-0000-1000-8000-00805f9b34fb")
    }

    @Test func vendorUUIDsKeepAll128Bits() throws {
        let text = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid.uuidString == text)
        #expect(uuid.shortValue == nil)
        #expect(uuid.description == text)
        #expect(BluetoothUUID(littleEndianBytes: uuid.littleEndianBytes) == uuid)
    }

    @Test(arguments: [
        "", "18", "180G", "0x", "12345", "6e400001-b5a3-f393-e0a9-e50e24dcca9", "6e400001b5a3-f393-e0a9-e50e24dcca9e0",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func littleEndianOnAirForms() {
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18]) == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(littleEndianBytes: [0x0D, 0x18, 0, 0]) == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(littleEndianBytes: [1, 2, 3]) == nil)
    }
}

@Suite struct BluetoothAddressTests {
    @Test func parsesAndPrints() throws {
        let address = try #require(BluetoothAddress("aa:bb:cc:dd:ee:0f"))
        #expect(address.string == "AA:BB:CC:DD:EE:0F")
        #expect(address.bluezPathComponent == "dev_AA_BB_CC_DD_EE_0F")
        #expect(BluetoothAddress("AA:BB:CC:DD:EE") == nil)
        #expect(BluetoothAddress("AA:BB:CC:DD:EE:GG") == nil)
        #expect(BluetoothAddress("C0:00:00:00:00:01", type: .random)?.randomSubtype == .staticAddress)
    }
}
