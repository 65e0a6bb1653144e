import Bluetooth
import Testing

@Suite struct AdvertisementDataTests {
    @Test func mergingKeepsWhatTheUpdateDoesNotSay() {
        let heartRate = BluetoothUUID(UInt16(0x180D))
        let bthome = BluetoothUUID(UInt16(0xFCD2))
        let first = AdvertisementData(
            localName: "Polar H10 SIM", serviceUUIDs: [heartRate], manufacturerData: [0x006B: [1, 2]],
            txPowerLevel: 4)
        let update = AdvertisementData(manufacturerData: [0x004C: [9]], serviceData: [bthome: [0x40, 1]])
        let merged = first.merging(update)
        #expect(merged.localName == "Polar H10 SIM")
        #expect(merged.serviceUUIDs == [heartRate])
        #expect(merged.manufacturerData == [0x006B: [1, 2], 0x004C: [9]])
        #expect(merged.serviceData == [bthome: [0x40, 1]])
        #expect(merged.txPowerLevel == 4)
        #expect(merged.merging(AdvertisementData(manufacturerData: [0x006B: [3]])).manufacturerData[0x006B] == [3])
        #expect(AdvertisementData().isEmpty)
        #expect(!merged.isEmpty)
    }

    @Test func serviceMatchingCoversServiceData() {
        let bthome = BluetoothUUID(UInt16(0xFCD2))
        let heartRate = BluetoothUUID(UInt16(0x180D))
        let advertisement = AdvertisementData(serviceData: [bthome: [0x40]])
        #expect(advertisement.advertisesAny(of: [bthome]))
        #expect(!advertisement.advertisesAny(of: [heartRate]))
        #expect(advertisement.advertisesAny(of: [BluetoothUUID]()))
    }
}
