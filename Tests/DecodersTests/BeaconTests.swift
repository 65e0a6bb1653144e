import Bluetooth
import Decoders
import Testing

/// iBeacon, Eddystone, RuuviTag and the Xiaomi custom-firmware formats.
@Suite struct BeaconTests {
    static let vectors: [Vector] = [
        // theengs/decoder tests/BLE/test_ble.cpp (real devices; company id bytes 4c00 removed).
        Vector(
            "ibeacon", "0215426c7565436861726d426561636f6e730efe1355c5",
            #"{"uuid":"426c7565-4368-6172-6d42-6561636f6e73","major":3838,"minor":4949,"measured_power":-59}"#,
            source: "theengs/decoder test_ble.cpp: BlueCharm BC08"),
        Vector(
            "ibeacon", "0215fda50693a4e24fb1afcfc6eb07647825000100021a",
            #"{"uuid":"fda50693-a4e2-4fb1-afcf-c6eb07647825","major":1,"minor":2,"measured_power":26}"#,
            source: "theengs/decoder test_ble.cpp: NRF51822 beacon"),
        // Eddystone protocol specification frame layouts (github.com/google/eddystone).
        Vector(
            "eddystone", "00 ee 00010203040506070809 0a0b0c0d0e0f 0000",
            #"{"frame":"uid","tx_power":-18,"namespace":"00010203040506070809","instance":"0a0b0c0d0e0f"}"#,
            source: "Eddystone-UID frame"),
        Vector(
            "eddystone", "10 ec 03 676f6f676c65 00",
            #"{"frame":"url","tx_power":-20,"url":"https://google.com/"}"#, source: "Eddystone-URL: scheme 3, .com/"),
        Vector(
            "eddystone", "10 00 00 6578616d706c65 08 2f61",
            #"{"frame":"url","tx_power":0,"url":"http://www.example.org/a"}"#, source: "Eddystone-URL: .org"),
        Vector(
            "eddystone", "20 00 0bb8 1980 00000064 00000a0a",
            #"{"frame":"tlm","battery_voltage":3,"temperature":25.5,"advertisement_count":100,"uptime":257}"#,
            source: "Eddystone-TLM: 3000 mV, 25.5 °C (8.8 fixed point)"),
        Vector(
            "eddystone", "20 00 0000 8000 00000001 00000000",
            #"{"frame":"tlm","battery_voltage":null,"temperature":null,"advertisement_count":1,"uptime":0}"#,
            source: "Eddystone-TLM: unsupported voltage and temperature"),
        Vector(
            "eddystone", "30 f0 0102030405060708",
            #"{"frame":"eid","tx_power":-16,"ephemeral_id":"0102030405060708"}"#, source: "Eddystone-EID"),
        // Published Eddystone frames: frawau/aioblescan tests/test_eddystone.py (HCI captures of a
        // BBC micro:bit MakeCode beacon, f1:55:90:65:29:dc) and Scrin/RuuviCollector
        // src/test/java/fi/tkgwf/ruuvi/TestFixture.java with EddystoneUIDTest / EddystoneTLMTest.
        Vector(
            "eddystone", "10 f6 03 6d616b65636f6465 00 2361626f7574",
            #"{"frame":"url","tx_power":-10,"url":"https://makecode.com/#about"}"#,
            source: "aioblescan test_eddystone_url: tx_power -10, https://makecode.com/#about"),
        Vector(
            "eddystone", "00 f6 00000000000000000063 000000000058",
            #"{"frame":"uid","tx_power":-10,"namespace":"00000000000000000063","instance":"000000000058"}"#,
            source: "aioblescan test_eddystone_uid: tx_power -10, namespace 0x63, instance 0x58 (no RFU bytes)"),
        Vector(
            "eddystone", "00 93 9E5D61E66621DA7CA630 0ED145673A89 0000",
            #"{"frame":"uid","tx_power":-109,"namespace":"9e5d61e66621da7ca630","instance":"0ed145673a89"}"#,
            source: "RuuviCollector EddystoneUIDTest: namespace 9E5D61E66621DA7CA630, instance 0ED145673A89, -109"),
        Vector(
            "eddystone", "20 00 0BB8 1900 000003E8 00002710",
            #"{"frame":"tlm","battery_voltage":3,"temperature":25,"advertisement_count":1000,"uptime":1000}"#,
            source: "RuuviCollector EddystoneTLMTest: 3.0 V, 25.0 °C, 1000 advertisements, 1000 s"),
        // docs.ruuvi.com data format 5 test vectors (valid, maximum, minimum, invalid).
        Vector(
            "ruuvi", "0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F",
            #"{"temperature":24.3,"humidity":53.49,"pressure":1000.44,"acceleration_x":0.004,"acceleration_y":-0.004,"acceleration_z":1.036,"battery_voltage":2.977,"tx_power":4,"movement_counter":66,"measurement_sequence":205,"mac":"CB:B8:33:4C:88:4F"}"#,
            source: "Ruuvi RAWv2 valid data"),
        Vector(
            "ruuvi", "057FFFFFFEFFFE7FFF7FFF7FFFFFDEFEFFFECBB8334C884F",
            #"{"temperature":163.835,"humidity":163.835,"pressure":1155.34,"acceleration_x":32.767,"acceleration_y":32.767,"acceleration_z":32.767,"battery_voltage":3.646,"tx_power":20,"movement_counter":254,"measurement_sequence":65534,"mac":"CB:B8:33:4C:88:4F"}"#,
            source: "Ruuvi RAWv2 maximum values"),
        Vector(
            "ruuvi", "058001000000008001800180010000000000CBB8334C884F",
            #"{"temperature":-163.835,"humidity":0,"pressure":500,"acceleration_x":-32.767,"acceleration_y":-32.767,"acceleration_z":-32.767,"battery_voltage":1.6,"tx_power":-40,"movement_counter":0,"measurement_sequence":0,"mac":"CB:B8:33:4C:88:4F"}"#,
            source: "Ruuvi RAWv2 minimum values"),
        Vector(
            "ruuvi", "058000FFFFFFFF800080008000FFFFFFFFFFFFFFFFFFFFFF",
            #"{"temperature":null,"humidity":null,"pressure":null,"acceleration_x":null,"acceleration_y":null,"acceleration_z":null,"battery_voltage":null,"tx_power":null,"movement_counter":null,"measurement_sequence":null,"mac":null}"#,
            source: "Ruuvi RAWv2 invalid values"),
        // docs.ruuvi.com data format 3 test vectors (ruuvi/docs communication/bluetooth-advertisements/
        // data-format-3-rawv1.md, "Test vectors": valid, maximum, minimum; pressure there in Pa).
        Vector(
            "ruuvi", "03291A1ECE1EFC18F94202CA0B53",
            #"{"humidity":20.5,"temperature":26.3,"pressure":1027.66,"acceleration_x":-1,"acceleration_y":-1.726,"acceleration_z":0.714,"battery_voltage":2.899}"#,
            source: "Ruuvi RAWv1 valid data: 26.3 C, 102766 Pa, 20.5 %, -1.000/-1.726/0.714 G, 2.899 V"),
        Vector(
            "ruuvi", "03FF7F63FFFF7FFF7FFF7FFFFFFF",
            #"{"humidity":127.5,"temperature":127.99,"pressure":1155.35,"acceleration_x":32.767,"acceleration_y":32.767,"acceleration_z":32.767,"battery_voltage":65.535}"#,
            source: "Ruuvi RAWv1 maximum values: 127.99 C, 115535 Pa, 127.5 %, 32.767 G, 65.535 V"),
        Vector(
            "ruuvi", "0300FF6300008001800180010000",
            #"{"humidity":0,"temperature":-127.99,"pressure":500,"acceleration_x":-32.767,"acceleration_y":-32.767,"acceleration_z":-32.767,"battery_voltage":0}"#,
            source: "Ruuvi RAWv1 minimum values: -127.99 C, 50000 Pa, 0.0 %, -32.767 G, 0.000 V"),
        // theengs/decoder test_ble.cpp, LYWSD03MMC with custom firmware (real captures).
        Vector(
            "atc1441", "a4c138d5d49801453e510b7b62",
            #"{"temperature":32.5,"humidity":62,"battery":81,"battery_voltage":2.939,"frame_counter":98,"mac":"A4:C1:38:D5:D4:98"}"#,
            source: "theengs/decoder LYWSD03MMC_ATC"),
        Vector(
            "atc1441", "a4c138d5d498ffd33e510b7b62",
            #"{"temperature":-4.5,"humidity":62,"battery":81,"battery_voltage":2.939,"frame_counter":98,"mac":"A4:C1:38:D5:D4:98"}"#,
            source: "theengs/decoder LYWSD03MMC_ATC, negative temperature"),
        Vector(
            "pvvx", "5601cf38c1a44008bd13470c64cc0f",
            #"{"temperature":21.12,"humidity":50.53,"battery":100,"battery_voltage":3.143,"counter":204,"reed_switch":true,"gpio_trigger":true,"output_by_thresholds":true,"temperature_trigger":true,"humidity_trigger":false,"mac":"A4:C1:38:CF:01:56"}"#,
            source: "theengs/decoder LYWSD03MMC_PVVX"),
        Vector(
            "pvvx", "628f5238c1a48307e4128f0b64b40f",
            #"{"temperature":19.23,"humidity":48.36,"battery":100,"battery_voltage":2.959,"counter":180,"reed_switch":true,"gpio_trigger":true,"output_by_thresholds":true,"temperature_trigger":true,"humidity_trigger":false,"mac":"A4:C1:38:52:8F:62"}"#,
            source: "theengs/decoder LYWSD03MMC_PVVX (MHO_SAL)"),
        Vector(
            "pvvx", "5601cf38c1a462fdbd13470c64cc0f",
            #"{"temperature":-6.7,"humidity":50.53,"battery":100,"battery_voltage":3.143,"counter":204,"reed_switch":true,"gpio_trigger":true,"output_by_thresholds":true,"temperature_trigger":true,"humidity_trigger":false,"mac":"A4:C1:38:CF:01:56"}"#,
            source: "theengs/decoder LYWSD03MMC_PVVX, negative temperature"),
    ]

    @Test(arguments: vectors)
    func decodesToGoldenJSON(_ vector: Vector) throws {
        let decoder = try #require(DecoderRegistry.standard.advertisementDecoder(named: vector.decoder))
        expectGolden(decoder.reading(bytes(vector.hex)), vector)
    }

    /// Bluetooth-Devices/atc-ble tests/test_parser.py: test_atc_pvvx_with_encryption (23.45 °C,
    /// 41.73 %, 61 %) and test_atc1441_with_encryption (26.5 °C, 47.0 %, 100 %), ATC_8D18B2
    /// A4:C1:38:8D:18:B2, bind key b9ea895fac7eea6d30532432a516f3a3.
    @Test func encryptedCustomFirmwareFormatsDecryptWithTheBindKey() {
        let context = AdvertisementContext(
            address: BluetoothAddress("A4:C1:38:8D:18:B2"), bindKey: bytes("b9ea895fac7eea6d30532432a516f3a3"))
        let pvvx = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181A)): bytes("11d603fbfa7b6dfb1e26fd")], manufacturerData: [:],
            context: context)
        #expect(pvvx.map(\.decoder) == ["pvvx"])
        #expect(
            pvvx.first?.jsonString()
                == #"{"temperature":23.45,"humidity":41.73,"battery":61,"counter":17,"reed_switch":false,"gpio_trigger":false,"output_by_thresholds":true,"temperature_trigger":false,"humidity_trigger":false,"encrypted":true}"#
        )
        let atc = ATCThermometerDecoder().reading(bytes("58e9e6556581b3f9"), context: context)
        #expect(
            atc.jsonString()
                == #"{"temperature":26.5,"humidity":47,"battery":100,"trigger":true,"frame_counter":88,"encrypted":true}"#
        )
        let wrongKey = AdvertisementContext(
            address: BluetoothAddress("A4:C1:38:8D:18:B2"), bindKey: bytes("231d39c1d7cc1ab1aee224cd096db932"))
        #expect(
            PVVXThermometerDecoder().reading(bytes("11d603fbfa7b6dfb1e26fd"), context: wrongKey).error?.code
                == .decryptionFailed)
        let otherAddress = AdvertisementContext(
            address: BluetoothAddress("A4:C1:38:8D:18:B3"), bindKey: bytes("b9ea895fac7eea6d30532432a516f3a3"))
        #expect(
            ATCThermometerDecoder().reading(bytes("58e9e6556581b3f9"), context: otherAddress).error?.code
                == .decryptionFailed)
        #expect(ATCThermometerDecoder().reading(bytes("58e9e6556581b3f9")).error?.field == "bind_key")
    }

    @Test func badPayloadsAreTypedErrorsNamingTheField() {
        let cases: [(any AdvertisementDecoder, String, DecoderError.Code, String)] = [
            (IBeaconDecoder(), "0215426c", .truncated, "uuid"),
            (IBeaconDecoder(), "0216426c7565436861726d426561636f6e730efe1355c5", .invalidValue, "length"),
            (IBeaconDecoder(), "1005", .unsupported, "type"),
            (EddystoneDecoder(), "40", .unsupported, "frame_type"),
            (EddystoneDecoder(), "10 00 09 41", .invalidValue, "url_scheme"),
            (EddystoneDecoder(), "10 00 00 41 ff", .invalidValue, "url"),
            (EddystoneDecoder(), "20 01 0000", .unsupported, "version"),
            (EddystoneDecoder(), "20 00 0bb8 1980 0000", .truncated, "advertisement_count"),
            (RuuviTagDecoder(), "0512FC", .truncated, "humidity"),
            (RuuviTagDecoder(), "04", .unsupported, "data_format"),
            (RuuviTagDecoder(), "03 29 1A", .truncated, "temperature_fraction"),
            (RuuviTagDecoder(), "03 29 1A 64 CE1E FC18 F942 02CA 0B53", .invalidValue, "temperature_fraction"),
            (ATCThermometerDecoder(), "a4c138d5d498ffd33e510b7b", .truncated, "frame_counter"),
            (PVVXThermometerDecoder(), "5601cf38c1a44008bd13470c64cc0f00", .trailingBytes, "pvvx"),
        ]
        for (decoder, hex, code, field) in cases {
            let reading = decoder.reading(bytes(hex))
            #expect(reading.error?.code == code, "\(decoder.name) \(hex)")
            #expect(reading.error?.field == field, "\(decoder.name) \(hex)")
        }
    }

    @Test func theRegistryPicksTheFormatFromTheAdvertisement() {
        let registry = DecoderRegistry.standard
        let readings = registry.decodeAdvertisement(
            serviceData: [
                BluetoothUUID(UInt16(0x181A)): bytes("a4c138d5d49801453e510b7b62"),
                BluetoothUUID(UInt16(0xFCD2)): bytes("40 0001 015d"),
            ],
            manufacturerData: [
                0x004C: bytes("0215fda50693a4e24fb1afcfc6eb07647825000100021a"),
                0x0499: bytes("0512FC5394C37C0004FFFC040CAC364200CDCBB8334C884F"),
                0x0006: bytes("0109"),
            ])
        #expect(readings.map(\.decoder) == ["atc1441", "bthome", "ibeacon", "ruuvi"])
        #expect(readings.allSatisfy { $0.isSuccess })
        let pvvx = registry.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181A)): bytes("5601cf38c1a44008bd13470c64cc0f")], manufacturerData: [:]
        )
        #expect(pvvx.map(\.decoder) == ["pvvx"])
        // Apple data that is not an iBeacon is not claimed by any decoder.
        #expect(registry.decodeAdvertisement(serviceData: [:], manufacturerData: [0x004C: bytes("1005")]).isEmpty)
    }

    @Test func theAdvertisementDecoderCanBeForcedByName() {
        let registry = DecoderRegistry.standard
        let forced = registry.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181A)): bytes("0102")], manufacturerData: [:], decoder: "pvvx")
        #expect(forced.first?.error?.code == .truncated)
        let unknown = registry.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181A)): bytes("0102")], manufacturerData: [:], decoder: "nope")
        #expect(unknown.first?.error?.code == .unknownDecoder)
        #expect(unknown.first?.rawHex == "0102")
    }
}
