import Bluetooth
import Decoders
import Testing

/// Govee thermo-hygrometers: vectors built from the frame descriptions in docs/decoders.md
/// ("Govee"), values worked out by hand; decoded through the registry as BlueZ reports them
/// (company id, entry without its two bytes, local name).
@Suite struct GoveeTests {
    static func decode(_ company: UInt16, _ hex: String, name: String? = nil) -> [DecodedReading] {
        manufacturerReadings(company, hex, name: name)
    }

    static func json(_ company: UInt16, _ hex: String, name: String? = nil) -> String? {
        let readings = decode(company, hex, name: name)
        guard readings.count == 1, readings[0].decoder == "govee" else { return nil }
        return readings[0].jsonString()
    }

    /// Meat thermometers: the H5182's two probes (probe 2 unplugged: null) by its company id, and
    /// the H5198's probes 3–4 by its pair byte (66). Values as govee-ble reads them, except the
    /// unplugged probe, which it reports as 0.0 °C (DifferentialSuiteTests lists that).
    @Test func meatThermometersByCompanyIDAndPairByte() {
        let h5182 = manufacturerReadings(0x2730, "0102030405060708092e196400ffff1ce8", name: nil).first
        #expect(
            h5182?.jsonString()
                == #"{"model":"H5182","temperature_probe_1":23.5,"temperature_alarm_probe_1":65,"temperature_probe_2":null,"temperature_alarm_probe_2":74}"#
        )
        let h5198 = manufacturerReadings(0x3022, "01020304050642081595177003e807d0ffffffff", name: nil).first
        #expect(h5198?["temperature_probe_3"] == .double(55.25))
        #expect(h5198?["low_temperature_alarm_probe_3"] == .double(10))
        #expect(h5198?["temperature_probe_4"] == .double(20))
        #expect(h5198?["temperature_alarm_probe_4"] == .null)
        #expect(h5198?["temperature_probe_1"] == nil)
        let unknownPair = manufacturerReadings(0x3022, "01020304050603081595177003e807d0ffffffff", name: nil).first
        #expect(unknownPair?.error?.field == "probe_pair")
        // By name under another company id; a wrong length is not a meat thermometer.
        #expect(
            manufacturerReadings(0x1234, "0102030405060708092e196400ffff1ce8", name: "H5182_1A2B").first?["model"]
                == .string("H5182"))
        #expect(manufacturerReadings(0x2730, "0102030405060708092e196400ffff1c", name: nil).isEmpty)
    }

    @Test func packedPositiveReading() {
        // 0x03A2D4 = 238292: 238 tenths of a degree, 292 tenths of a percent; battery 0x5C = 92 %.
        #expect(
            Self.json(0xEC88, "00 03a2d4 5c 00", name: "GVH5075_1A2B")
                == #"{"temperature":23.8,"humidity":29.2,"battery":92,"sensor_error":false,"model":"H5075"}"#)
    }

    @Test func packedNegativeReadingUsesTheSignBit() {
        // −5.3 °C, 45.6 %: 53 × 1000 + 456 = 0x00D0D0, sign bit 23 set.
        #expect(
            Self.json(0xEC88, "00 80d0d0 64 00")
                == #"{"temperature":-5.3,"humidity":45.6,"battery":100,"sensor_error":false,"model":"H5072/H5075"}"#)
    }

    @Test func errorBitAndOutOfRangeGiveNullReadings() {
        // Battery byte 0xE4: bit 7 (error) and 100 %.
        #expect(
            Self.json(0xEC88, "00 03a2d4 e4 00")
                == #"{"temperature":null,"humidity":null,"battery":100,"sensor_error":true,"model":"H5072/H5075"}"#)
        // 0x7FFFFF: 838.8 °C, outside −40…100 °C.
        #expect(Self.json(0xEC88, "00 7fffff 50 00")?.contains(#""temperature":null"#) == true)
    }

    @Test func littleEndianPairModels() {
        // 0x093C = 2364 → 23.64 °C, 0x13A0 = 5024 → 50.24 %, 0x5A = 90 %.
        let expected = #"{"temperature":23.64,"humidity":50.24,"battery":90,"model":"#
        #expect(Self.json(0xEC88, "00 3c09 a013 5a 02") == expected + #""H5074"}"#)
        #expect(Self.json(0xEC88, "00 3c09 a013 5a 000000", name: "GVH5052_0000") == expected + #""H5052"}"#)
        #expect(Self.json(0x8801, "01010101 3c09 a013 5a", name: "GVH5179_0000") == expected + #""H5179"}"#)
        // −0.5 °C: int16 0xFFCE.
        #expect(Self.json(0xEC88, "00 ceff a013 5a 02")?.hasPrefix(#"{"temperature":-0.5,"#) == true)
    }

    @Test func company0001NeedsAGoveeNameForSixBytes() {
        #expect(
            Self.json(0x0001, "0101 03a2d4 5c", name: "GVH5101_1234")
                == #"{"temperature":23.8,"humidity":29.2,"battery":92,"sensor_error":false,"model":"H5101"}"#)
        #expect(Self.json(0x0001, "0101 03a2d4 5c", name: "GV5179_1234")?.hasSuffix(#""model":"GV5179"}"#) == true)
        #expect(Self.decode(0x0001, "0101 03a2d4 5c").isEmpty)
        #expect(Self.decode(0x0001, "0101 03a2d4 5c", name: "Nokia phone").isEmpty)
        #expect(Self.json(0x0001, "0101 03a2d4 5c 0000")?.hasSuffix(#""model":"H5108"}"#) == true)
    }

    @Test func outdoorSensorNamesPrimaryAndRemote() {
        #expect(
            Self.json(0x0001, "0101 01 03a2d4 5c 0000")
                == #"{"temperature":23.8,"humidity":29.2,"battery":92,"sensor_error":false,"sensor":"remote","sensor_id":1,"model":"H5178"}"#
        )
        #expect(Self.json(0x0001, "0101 00 03a2d4 5c 0000")?.contains(#""sensor":"primary""#) == true)
    }

    @Test func otherLengthsAndTagsAreNotGovee() {
        #expect(Self.decode(0xEC88, "00 03a2d4 5c").isEmpty)
        #expect(Self.decode(0xEC89, "00 03a2d4 5c 00").isEmpty)
        let forced = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [0xEC88: bytes("00 03a2")], decoder: "govee")
        #expect(forced.first?.error?.code == .unsupported)
    }

    @Test func packedValueSplitsAtTheThousands() {
        // Sign bit with magnitude 999: 0 tenths of a degree (no −0), 99.9 %.
        let reading = Self.decode(0xEC88, "00 8003e7 50 00").first
        #expect(reading?["temperature"] == .double(0))
        #expect(reading?["humidity"] == .double(99.9))
    }
}
