import Bluetooth
import Decoders
import Testing

/// Victron Instant Readout (manufacturer data 0x02E1, AES-128-CTR). The frames were encrypted
/// with Python's `cryptography` from records packed by hand from Victron's description;
/// `DifferentialSuiteTests` checks 10,000 more against victron-ble.
@Suite struct VictronTests {
    static let key = bytes("0df4d0617b6c4e1b9d3f1a2b3c4d5e6f")

    static func decode(_ hex: String, key: [UInt8]? = VictronTests.key) -> DecodedReading? {
        DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [0x02E1: bytes(hex)], context: AdvertisementContext(bindKey: key)
        ).first
    }

    @Test func aesCTRMatchesNISTSP80038A() throws {
        // SP 800-38A F.5.1, CTR-AES128.Encrypt, blocks 1 and 2.
        let key = bytes("2b7e151628aed2a6abf7158809cf4f3c")
        let counter = bytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let plain = bytes("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let cipher = try AESCTR.apply(plain, key: key, counter: counter)
        #expect(Hex.string(cipher) == "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff")
        #expect(try AESCTR.apply(cipher, key: key, counter: counter) == plain)
        #expect(throws: DecoderError.self) { _ = try AESCTR.apply(plain, key: [1, 2], counter: counter) }
    }

    @Test func solarChargerLeavesOutTheLoadItDoesNotMeasure() {
        #expect(
            Self.decode("100253a00134120ddaeaf04a3eb8b7f42fc70e49")?.jsonString()
                == #"{"model":"Solar Charger","product_id":"0xA053","record_type":1,"device_state_code":3,"device_state":"bulk","charger_error":0,"battery_voltage":13.45,"battery_current":5.2,"yield_today":1230,"solar_power":71}"#
        )
    }

    @Test func batteryMonitorWithTemperatureOnTheAuxInput() {
        #expect(
            Self.decode("100289a302b0400d896c8f2dd6a21251f6e8f4039900da")?.jsonString()
                == #"{"model":"Battery Monitor","product_id":"0xA389","record_type":2,"time_remaining":600,"voltage":12.87,"alarm":0,"aux_mode":2,"aux_input":"temperature","current":-2.345,"consumed_ah":-12.3,"state_of_charge":87.5,"temperature":25}"#
        )
    }

    @Test func inverterAndDCDCConverter() {
        let inverter = Self.decode("100231a20301000dff860c401005c221227552")
        #expect(inverter?["device_state"] == .string("inverting"))
        #expect(inverter?["ac_voltage"] == .double(230.1))
        #expect(inverter?["ac_current"] == .double(1.8))
        #expect(inverter?["ac_apparent_power"] == .int(420))
        #expect(inverter?["battery_voltage"] == .double(13.02))
        let converter = Self.decode("1002c0a304efbe0d98ba2884827d5dc78cdb")
        #expect(converter?["model"] == .string("DC-DC Converter"))
        #expect(converter?["input_voltage"] == .double(14.1))
        #expect(converter?["output_voltage"] == .double(13.8))
        #expect(converter?["off_reason"] == .int(0))
    }

    @Test func aWrongOrMissingKeyIsAnErrorNotReadings() {
        var wrong = Self.key
        wrong[0] ^= 0x01
        let refused = Self.decode("100289a302b0400d896c8f2dd6a21251f6e8f4039900da", key: wrong)
        #expect(refused?.error?.code == .decryptionFailed)
        #expect(refused?.error?.field == "bind_key")
        #expect(refused?.fields.isEmpty == true)
        let missing = Self.decode("100289a302b0400d896c8f2dd6a21251f6e8f4039900da", key: nil)
        #expect(missing?.error?.code == .missingKey)
    }

    @Test func otherRecordsAndShortOnesAreRefusedByName() {
        #expect(Self.decode("100289a305b0400d896c8f2dd6a21251")?.error?.field == "record_type")
        #expect(Self.decode("100289a302b0400d896c")?.error?.code == .truncated)
        // Not a product advertisement: another decoder's business, Victron's does not claim it.
        #expect(Self.decode("110289a302b0400d896c8f2dd6a21251")?.decoder != "victron")
    }

    @Test func framesBuiltForTheSimulatorDecode() throws {
        let record: [UInt8] = [3, 0, 0x41, 0x05, 0x34, 0, 0x7B, 0, 0x47, 0, 0xFF, 0x01]
        let frame = try VictronDecoder.frame(type: 1, product: 0xA053, counter: 0x1234, record: record, key: Self.key)
        #expect(Hex.string(frame) == "100253a00134120ddaeaf04a3eb8b7f42fc70e49")
    }
}
