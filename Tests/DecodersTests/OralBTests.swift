import Bluetooth
import Decoders
import Testing

/// Oral-B toothbrushes (manufacturer data 0x00DC). The vectors are built from the advertisement
/// layout (protocol, model, firmware, state, status, time, mode, sector, sector timer, sectors);
/// `DifferentialSuiteTests` checks 10,000 more against oralb-ble.
@Suite struct OralBTests {
    static func decode(_ hex: String) -> DecodedReading {
        DecoderRegistry.standard.decodeAdvertisement(serviceData: [:], manufacturerData: [0x00DC: bytes(hex)]).first
            ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }

    @Test func brushingGeniusWithSectors() {
        // D701 brushing for 1:30 with high pressure, daily clean, quadrant 2 of 4, 15 s in it.
        #expect(
            Self.decode("032001038001 1e01020f04".replacingOccurrences(of: " ", with: "")).jsonString()
                == #"{"model":"Genius Series D701","model_id":32,"protocol_version":3,"firmware":1,"state_code":3,"state":"running","brushing":true,"pressure":"high","time":90,"mode_code":1,"mode":"daily clean","sector":2,"sector_timer":15,"number_of_sectors":4}"#
        )
    }

    @Test func idleIOSeriesUsesItsOwnModes() {
        let reading = Self.decode("043510020000000903")
        #expect(reading["model"] == .string("IO Series 5"))
        #expect(reading["state"] == .string("idle"))
        #expect(reading["brushing"] == .bool(false))
        #expect(reading["mode"] == .string("off"))
        // Not brushing: the sector byte is the last position, not a reading.
        #expect(reading["sector"] == .int(0))
        #expect(reading["sector_timer"] == nil)
    }

    @Test func lastSectorAndButtons() {
        #expect(Self.decode("03200103000000010700" + "06")["sector"] == .int(6))
        #expect(Self.decode("032001030000000107")["sector"] == .int(4))
        #expect(Self.decode("03200103" + "8c" + "00000107")["pressure"] == .string("power button pressed"))
        #expect(Self.decode("03200103" + "84" + "00000107")["pressure"] == .string("button pressed"))
        #expect(Self.decode("03200103" + "32" + "00000107")["pressure"] == .string("normal"))
    }

    @Test func unknownCodesKeepTheBytes() {
        let reading = Self.decode("03ff0107000000" + "63" + "00")
        #expect(reading["model"] == nil)
        #expect(reading["model_id"] == .int(255))
        #expect(reading["state"] == nil)
        #expect(reading["state_code"] == .int(7))
        #expect(reading["mode"] == nil)
        #expect(reading["mode_code"] == .int(99))
    }

    @Test func onlyTheTwoLengths() {
        let decoder = OralBDecoder()
        #expect(!decoder.accepts(bytes("03200103000000010700")))
        #expect(decoder.reading(bytes("03200103000000010700")).error?.field == "number_of_sectors")
        #expect(decoder.reading(bytes("032001030000000107000600")).error?.code == .trailingBytes)
    }
}
