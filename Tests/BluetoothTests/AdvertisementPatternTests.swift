import Bluetooth
import Testing

/// Or-patterns of BlueZ advertisement monitors: bluetoothd's limits and how a pattern matches.
@Suite struct AdvertisementPatternTests {
    static let bthome = AdvertisementData(
        localName: "BTHome SIM", serviceUUIDs: [BluetoothUUID(UInt16(0x181A))],
        manufacturerData: [0x0499: [0x05, 0x12]],
        serviceData: [BluetoothUUID(UInt16(0xFCD2)): [0x40, 0x02, 0xCA, 0x09]])

    @Test func limitsAreBluetoothds() {
        #expect(AdvertisementPattern(adType: 0x16, content: []) == nil, "no content")
        #expect(AdvertisementPattern(adType: 0x16, content: [UInt8](repeating: 1, count: 31)) != nil)
        #expect(AdvertisementPattern(adType: 0x16, content: [UInt8](repeating: 1, count: 32)) == nil)
        #expect(AdvertisementPattern(startPosition: 30, adType: 0x16, content: [1]) != nil)
        #expect(AdvertisementPattern(startPosition: 30, adType: 0x16, content: [1, 2]) == nil, "ends past 31 bytes")
        #expect(AdvertisementPattern(adType: 0x00, content: [1]) == nil)
        #expect(AdvertisementPattern(adType: 0x3D, content: [1]) != nil)
        #expect(AdvertisementPattern(adType: 0x3E, content: [1]) == nil)
        #expect(AdvertisementPattern(adType: 0xFF, content: [1]) != nil)
    }

    @Test func structuresAreWhatGoesOnAir() {
        let structures = ADStructure.structures(of: Self.bthome)
        #expect(
            structures == [
                ADStructure(type: 0x09, data: Array("BTHome SIM".utf8)),
                ADStructure(type: 0x03, data: [0x1A, 0x18]),
                ADStructure(type: 0x16, data: [0xD2, 0xFC, 0x40, 0x02, 0xCA, 0x09]),
                ADStructure(type: 0xFF, data: [0x99, 0x04, 0x05, 0x12]),
            ])
        let custom = BluetoothUUID("6b1e0002-3c4d-4e5f-8a9b-0c1d2e3f4a5b")!
        let long = ADStructure.structures(of: AdvertisementData(serviceData: [custom: [7]]))
        #expect(long == [ADStructure(type: 0x21, data: custom.littleEndianBytes + [7])])
    }

    @Test func matchingLooksAtOneTypeFromItsStartPosition() throws {
        let structures = ADStructure.structures(of: Self.bthome)
        let serviceData = try #require(AdvertisementPattern(adType: 0x16, content: [0xD2, 0xFC]))
        #expect(serviceData.matches(structures))
        let flagsByte = try #require(AdvertisementPattern(startPosition: 2, adType: 0x16, content: [0x40]))
        #expect(flagsByte.matches(structures))
        let shifted = try #require(AdvertisementPattern(startPosition: 1, adType: 0x16, content: [0xD2, 0xFC]))
        #expect(!shifted.matches(structures))
        let otherType = try #require(AdvertisementPattern(adType: 0x21, content: [0xD2, 0xFC]))
        #expect(!otherType.matches(structures))
        let pastTheEnd = try #require(AdvertisementPattern(startPosition: 4, adType: 0xFF, content: [0x12, 0x00]))
        #expect(!pastTheEnd.matches(structures), "the structure is shorter than the pattern's end")
        let company = try #require(AdvertisementPattern(adType: 0xFF, content: [0x99, 0x04]))
        #expect(AdvertisementPattern.anyMatches([otherType, company], structures))
        #expect(!AdvertisementPattern.anyMatches([otherType, shifted], structures))
        #expect(!AdvertisementPattern.anyMatches([], structures))
    }

    /// bluetoothd 5.71 and later (software filtering): a service-data pattern starts after the
    /// UUID of any service data entry, manufacturer data still with the company id, names and
    /// service UUID lists never match, other types as before.
    @Test func afterServiceUUIDReadsAsBluetoothd571() throws {
        let structures = ADStructure.structures(of: Self.bthome) + [ADStructure(type: 0x01, data: [0x06])]
        let uuidFirst = try #require(AdvertisementPattern(adType: 0x16, content: [0xD2, 0xFC]))
        let infoByte = try #require(AdvertisementPattern(adType: 0x16, content: [0x40]))
        #expect(uuidFirst.matches(structures, .wholeStructure) && !uuidFirst.matches(structures, .afterServiceUUID))
        #expect(!infoByte.matches(structures, .wholeStructure) && infoByte.matches(structures, .afterServiceUUID))
        let anyWidth = try #require(AdvertisementPattern(adType: 0x21, content: [0x40, 0x02]))
        #expect(
            anyWidth.matches(structures, .afterServiceUUID), "the pattern's type is not compared with the UUID's size")
        let tooLong = try #require(AdvertisementPattern(startPosition: 3, adType: 0x16, content: [0x09, 0x00]))
        #expect(!tooLong.matches(structures, .afterServiceUUID))
        let company = try #require(AdvertisementPattern(adType: 0xFF, content: [0x99, 0x04]))
        #expect(company.matches(structures, .afterServiceUUID))
        let name = try #require(AdvertisementPattern(adType: 0x09, content: Array("BTHome".utf8)))
        let list = try #require(AdvertisementPattern(adType: 0x03, content: [0x1A, 0x18]))
        #expect(name.matches(structures, .wholeStructure) && !name.matches(structures, .afterServiceUUID))
        #expect(list.matches(structures, .wholeStructure) && !list.matches(structures, .afterServiceUUID))
        let flags = try #require(AdvertisementPattern(adType: 0x01, content: [0x06]))
        #expect(flags.matches(structures, .afterServiceUUID))
    }
}
