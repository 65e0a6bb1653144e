import Bluetooth
import Decoders
import Testing

/// SensorPush (manufacturer data whose company-id bytes are data, identified by the advertised
/// service UUID). The vectors pack chosen readings by the format (mixed radix, first reading in
/// the lowest digit; the HT1's Sensirion words); `DifferentialSuiteTests` checks 10,000 more
/// against sensorpush-ble.
@Suite struct SensorPushTests {
    static func decode(_ hex: String, service: BluetoothUUID = SensorPushDecoder.service) -> [DecodedReading] {
        let raw = bytes(hex)
        let company = UInt16(raw[0]) | UInt16(raw[1]) << 8
        return DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [company: Array(raw[2...])],
            context: AdvertisementContext(serviceUUIDs: [service]))
    }

    @Test func htw() {
        // Digits 24,600 (21.5 °C) and 18,100 (45.25 %): 24,600 + 18,100 × 66,001.
        let reading = Self.decode("040ccd3447").first
        #expect(reading?.decoder == "sensorpush")
        #expect(reading?.jsonString() == #"{"model":"HT.w","temperature":21.5,"humidity":45.25}"#)
    }

    @Test func htpxwWithPressure() {
        // 20 °C, 50 %, 101,325 Pa.
        #expect(
            Self.decode("00fdc9b155d5ba").first?.jsonString()
                == #"{"model":"HTP.xw","temperature":20,"humidity":50,"pressure":1013.25}"#)
    }

    @Test func tcxThermocouple() {
        // Digit 7,201 of 0.0625 °C from −200 °C.
        #expect(Self.decode("08211c00").first?.jsonString() == #"{"model":"TC.x","temperature":250.0625}"#)
    }

    @Test func ht1SensirionWords() {
        // Humidity word 1,835 (49.9998 %), temperature word 6,326 (20.997 °C), type 1.
        let reading = Self.decode("2b678b05", service: SensorPushHT1Decoder.service).first
        #expect(reading?.decoder == "sensorpush_ht1")
        #expect(reading?.jsonString() == #"{"model":"HT1","temperature":21,"humidity":50}"#)
        // The formula exceeds 100 % near the top of the word: clamped.
        #expect(Self.decode("ff0f0004", service: SensorPushHT1Decoder.service).first?["humidity"] == .double(100))
        #expect(
            Self.decode("2b678b09", service: SensorPushHT1Decoder.service).first?.error?.code == .unsupported)
    }

    @Test func pagesWithoutReadingsAndOtherTypes() {
        let page = Self.decode("050ccd3447").first
        #expect(page?.error?.code == .unsupported)
        #expect(page?.error?.field == "page")
        #expect(Self.decode("0c0ccd3447").first?.error?.field == "device_type")
        #expect(SensorPushDecoder().reading([0x04]).error?.code == .truncated)
        #expect(SensorPushDecoder().reading(bytes("04000000000000000000")).error?.code == .trailingBytes)
    }

    @Test func onlyAnAdvertiserListingTheServiceIsDecoded() {
        let readings = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [0x0C04: bytes("cd3447")])
        #expect(readings.isEmpty)
    }
}
