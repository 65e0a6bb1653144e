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
        #expect(Self.decode("100289a306b0400d896c8f2dd6a21251")?.error?.field == "record_type")
        #expect(Self.decode("100289a302b0400d896c")?.error?.code == .truncated)
        // The header alone: an empty record, Victron's decoder refuses it as cut short.
        #expect(Self.decode("100289a305b0400d")?.error?.code == .truncated)
        // Not a product advertisement: another decoder's business, Victron's does not claim it.
        #expect(Self.decode("110289a302b0400d896c8f2dd6a21251")?.decoder != "victron")
    }

    /// A record of `type` packed by hand (bits least-significant first, as in the comments),
    /// encrypted with the test key, decoded.
    static func decodeRecord(_ type: UInt8, product: UInt16, _ record: String) throws -> DecodedReading? {
        let frame = try VictronDecoder.frame(
            type: type, product: product, counter: 0x0BEE, record: bytes(record), key: key)
        return decode(Hex.string(frame))
    }

    @Test func smartLithiumCellsOutOfRangeAreNullAndAbsentCellsLeftOut() throws {
        // BMS flags 1, errors 0; cells 72, 73, 0x7E (above range), 0x00 (below), four 0x7F (none);
        // 13.30 V, balancing, 65 (25 °C).
        #expect(
            try Self.decodeRecord(5, product: 0xA0E5, "010000000000c8a41ff0ffffff322541")?.jsonString()
                == #"{"model":"Smart Lithium","product_id":"0xA0E5","record_type":5,"bms_flags":1,"error_flags":0,"cell_voltage_1":3.32,"cell_voltage_2":3.33,"cell_voltage_3":null,"cell_voltage_4":null,"battery_voltage":13.3,"balancer_status_code":2,"balancer_status":"balancing","battery_temperature":25}"#
        )
    }

    @Test func dcEnergyMeterWithoutItsTemperature() throws {
        // Meter type -8, 12.87 V, alarm 0, aux 0xFFFF in temperature mode (not available), -2.345 A.
        #expect(
            try Self.decodeRecord(0x0D, product: 0xA3A8, "f8ff07050000ffff5edbff")?.jsonString()
                == #"{"model":"DC Energy Meter","product_id":"0xA3A8","record_type":13,"meter_type_code":-8,"meter_type":"wind_charger","voltage":12.87,"alarm":0,"aux_mode":2,"aux_input":"temperature","current":-2.345}"#
        )
    }

    @Test func orionXSLynxBMSACChargerAndBatteryProtect() throws {
        // Bulk, no error, out 13.80 V 12.3 A, in 14.10 V, input current not available, off reason 0.
        let orion = try Self.decodeRecord(0x0F, product: 0xA3F0, "030064057b008205ffff00000000")
        #expect(orion?["device_state"] == .string("bulk"))
        #expect(orion?["output_current"] == .double(12.3))
        #expect(orion?["input_voltage"] == .double(14.1))
        #expect(orion?["input_current"] == nil)
        // 600 min, 26.10 V, -5.5 A, SOC not available, 12.3 Ah consumed, temperature not available.
        let lynx = try Self.decodeRecord(0x0A, product: 0xA3E5, "005802320ac9ff00000000fcbf07007f")
        #expect(lynx?["time_remaining"] == .int(600))
        #expect(lynx?["current"] == .double(-5.5))
        #expect(lynx?["state_of_charge"] == nil)
        #expect(lynx?["consumed_ah"] == .double(12.3))
        #expect(lynx?["battery_temperature"] == nil)
        // Float, output 1: 13.80 V 5.2 A, outputs 2 and 3 not available, 21 °C, 1.2 A AC.
        #expect(
            try Self.decodeRecord(8, product: 0xA339, "0500648506ffffffffffff3d06")?.jsonString()
                == #"{"model":"AC Charger","product_id":"0xA339","record_type":8,"device_state_code":5,"device_state":"float","charger_error":0,"output_voltage_1":13.8,"output_current_1":5.2,"temperature":21,"ac_current":1.2}"#
        )
        // Low power, output on, no error, warning 1, in 12.80 V, out 12.75 V.
        let protect = try Self.decodeRecord(9, product: 0xA3C4, "010100000001000005fb0400000000")
        #expect(protect?["output_state"] == .string("on"))
        #expect(protect?["warning"] == .int(1))
        #expect(protect?["input_voltage"] == .double(12.8))
        #expect(protect?["output_voltage"] == .double(12.75))
    }

    @Test func framesBuiltForTheSimulatorDecode() throws {
        let record: [UInt8] = [3, 0, 0x41, 0x05, 0x34, 0, 0x7B, 0, 0x47, 0, 0xFF, 0x01]
        let frame = try VictronDecoder.frame(type: 1, product: 0xA053, counter: 0x1234, record: record, key: Self.key)
        #expect(Hex.string(frame) == "100253a00134120ddaeaf04a3eb8b7f42fc70e49")
    }
}
