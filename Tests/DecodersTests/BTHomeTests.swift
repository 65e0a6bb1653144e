import Bluetooth
import Decoders
import Testing

/// BTHome v2. Vectors marked "bthome-ble" come from the tests of the reference parser used by
/// Home Assistant (github.com/Bluetooth-Devices/bthome-ble, tests/test_parser_v2.py and
/// tests/test_v2_encryption.py); "Shelly BLU" is a real device capture published there.
@Suite struct BTHomeTests {
    static let fcd2 = BluetoothUUID(UInt16(0xFCD2))
    static let key = bytes("231d39c1d7cc1ab1aee224cd096db932")
    static let address = BluetoothAddress("54:48:E6:8F:80:A5")!

    static let vectors: [Vector] = [
        Vector(
            "bthome", "40 00 01 02 ca09 03 bf13",
            #"{"packet_id":1,"temperature":25.06,"humidity":50.55,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io format example (packet id, temperature, humidity)"),
        Vector(
            "bthome", "40 02ca09 02cf09",
            #"{"temperature_1":25.06,"temperature_2":25.11,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_double_temperature"),
        Vector(
            "bthome", "40 02ca09 02cf09 02cf08 03b718 03b717 015d",
            #"{"temperature_1":25.06,"temperature_2":25.11,"temperature_3":22.55,"humidity_1":63.27,"humidity_2":60.71,"battery":93,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_triple_temperature_double_humidity_battery"),
        Vector(
            "bthome", "40 0001 0b000000 4a0d09 0133 0ce90c",
            #"{"packet_id":1,"power":0,"voltage_1":231.7,"battery":51,"voltage_2":3.305,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_double_voltage_different_object_id"),
        Vector(
            "bthome", "40 3a04", #"{"button":"long_press","encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_event_button_long_press"),
        Vector(
            "bthome", "40 3a00 3a01 3a03",
            #"{"button_1":"none","button_2":"press","button_3":"triple_press","encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_event_triple_button_device"),
        Vector(
            "bthome", "40 3a80", #"{"button":"hold_press","encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_event_button_hold_press"),
        Vector(
            "bthome", "40 3afe", #"{"button":null,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_invalid_button_event"),
        Vector(
            "bthome", "40 3c0103",
            #"{"dimmer":"rotate_left","dimmer_steps":3,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_event_dimmer_rotate_left_3_steps"),
        Vector(
            "bthome", "44 0021 015e 3a01",
            #"{"packet_id":33,"battery":94,"button":"press","encrypted":false,"trigger_based":true}"#,
            source: "bthome-ble test_bthome_shelly_button_no_press (Shelly BLU Button)"),
        Vector(
            "bthome", "40 6240 99dfff", #"{"speed":-2.123456,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_speed_signed"),
        Vector(
            "bthome", "44 505d396164",
            #"{"timestamp":"2023-05-14T19:41:17Z","encrypted":false,"trigger_based":true}"#,
            source: "bthome-ble test_bthome_timestamp"),
        Vector(
            "bthome", "44 530c48656c6c6f20576f726c6421",
            #"{"text":"Hello World!","encrypted":false,"trigger_based":true}"#, source: "bthome-ble test_bthome_text"),
        Vector(
            "bthome", "44 540c48656c6c6f20576f726c6421",
            #"{"raw":"48656c6c6f20576f726c6421","encrypted":false,"trigger_based":true}"#,
            source: "bthome-ble test_bthome_raw"),
        Vector(
            "bthome", "40 5e3f75 5f11d5",
            #"{"direction":300.15,"precipitation":5454.5,"encrypted":false,"trigger_based":false}"#,
            source: "bthome-ble test_bthome_direction_precipitation (Shelly BLU weather station)"),
        Vector(
            "bthome", "40 5805", #"{"temperature":1.75,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io: 0x58 temperature in 0.35 °C steps"),
        Vector(
            "bthome", "40 f00100 f100010204 f2000106",
            #"{"device_type_id":1,"firmware_version_1":"4.2.1.0","firmware_version_2":"6.1.0","encrypted":false,"trigger_based":false}"#,
            source: "bthome.io: device information objects"),
        Vector(
            "bthome", "40 02ca09 7001",
            #"{"temperature":25.06,"undecoded_object_id":"0x70","undecoded_hex":"7001","encrypted":false,"trigger_based":false}"#,
            source: "unknown object id: fields before it are kept"),
        Vector(
            "bthome", "42 a5808fe64854 2101",
            #"{"motion":true,"encrypted":false,"trigger_based":false}"#, source: "bthome.io: address included (bit 1)"),
        // Device information objects. bthome.io/format, table "Device information": F00100 → device type
        // id 1, F100010204 → firmware 4.2.1.0 (uint32), F2000106 → firmware 6.1.0 (uint24). bthome-ble
        // itself does not decode 0xF0–0xF2 (nothing in its parser or tests at d55bd3a), so the format
        // page is the only published source.
        Vector(
            "bthome", "40 f00100", #"{"device_type_id":1,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format device information: F00100 = 1"),
        Vector(
            "bthome", "40 f100010204", #"{"firmware_version":"4.2.1.0","encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format device information: F100010204 = 4.2.1.0"),
        Vector(
            "bthome", "40 f2000106", #"{"firmware_version":"6.1.0","encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format device information: F2000106 = 6.1.0"),
        Vector(
            "bthome", "44 f00100 f100010204 f2000106",
            #"{"device_type_id":1,"firmware_version_1":"4.2.1.0","firmware_version_2":"6.1.0","encrypted":false,"trigger_based":true}"#,
            source: "the three bthome.io/format device-information examples in one trigger-based packet"),
    ]

    /// BTHome v1 (service data 0x181C): every vector of bthome-ble's tests/test_parser_v1.py for an
    /// unencrypted payload, with the values it asserts.
    static let v1Vectors: [Vector] = [
        Vector(
            "bthome_v1", "23 02ca09 03 03bf13", #"{"temperature":25.06,"humidity":50.55,"encrypted":false}"#,
            source: "bthome-ble test_bthome_temperature_humidity (ATC_8D18B2)"),
        Vector(
            "bthome_v1", "23 02 5d09 03 03 b718 02 01 5d",
            #"{"temperature":23.97,"humidity":63.27,"battery":93,"encrypted":false}"#,
            source: "bthome-ble test_bthome_temperature_humidity_battery"),
        Vector(
            "bthome_v1", "04 04 138a01", #"{"pressure":1008.83,"encrypted":false}"#,
            source: "bthome-ble test_bthome_pressure"),
        Vector(
            "bthome_v1", "04 05 138a14", #"{"illuminance":13460.67,"encrypted":false}"#,
            source: "bthome-ble test_bthome_illuminance"),
        Vector(
            "bthome_v1", "43 06 fe70", #"{"weight":102.24,"encrypted":false}"#,
            source: "bthome-ble test_bthome_mass_kilograms (half-precision float)"),
        Vector(
            "bthome_v1", "03 07 3e1d", #"{"weight":74.86,"encrypted":false}"#,
            source: "bthome-ble test_bthome_mass_pounds"),
        Vector(
            "bthome_v1", "23 08 ca06", #"{"dew_point":17.38,"encrypted":false}"#,
            source: "bthome-ble test_bthome_dew_point"),
        Vector("bthome_v1", "02 09 60", #"{"count":96,"encrypted":false}"#, source: "bthome-ble test_bthome_count"),
        Vector(
            "bthome_v1", "04 0a 138a14", #"{"energy":1346.067,"encrypted":false}"#,
            source: "bthome-ble test_bthome_energy"),
        Vector(
            "bthome_v1", "04 0b 021b00", #"{"power":69.14,"encrypted":false}"#, source: "bthome-ble test_bthome_power"),
        Vector(
            "bthome_v1", "03 0c 020c", #"{"voltage":3.074,"encrypted":false}"#, source: "bthome-ble test_bthome_voltage"
        ),
        Vector(
            "bthome_v1", "02 0f 01", #"{"generic":true,"encrypted":false}"#,
            source: "bthome-ble test_bthome_binary_sensor"),
        Vector(
            "bthome_v1", "02 10 01", #"{"power_on":true,"encrypted":false}"#,
            source: "bthome-ble test_bthome_binary_sensor_power"),
        Vector(
            "bthome_v1", "02 11 00", #"{"opening":false,"encrypted":false}"#,
            source: "bthome-ble test_bthome_binary_sensor_opening"),
        Vector(
            "bthome_v1", "03 0d 120c 03 0e 021c", #"{"pm25":3090,"pm10":7170,"encrypted":false}"#,
            source: "bthome-ble test_bthome_pm"),
        Vector("bthome_v1", "03 12 e204", #"{"co2":1250,"encrypted":false}"#, source: "bthome-ble test_bthome_co2"),
        Vector(
            "bthome_v1", "a5 50 5d396164", #"{"timestamp":"2023-05-14T19:41:17Z","encrypted":false}"#,
            source: "bthome-ble test_bthome_timestamp (2023-05-14 19:41:17 UTC)"),
        Vector("bthome_v1", "03 13 3301", #"{"tvoc":307,"encrypted":false}"#, source: "bthome-ble test_bthome_voc"),
        Vector(
            "bthome_v1", "03 14 020c", #"{"moisture":30.74,"encrypted":false}"#,
            source: "bthome-ble test_bthome_moisture"),
        Vector(
            "bthome_v1", "02 3a 04", #"{"button":"long_press","encrypted":false}"#,
            source: "bthome-ble test_bthome_event_button_long_press"),
        Vector(
            "bthome_v1", "03 3c 01 03", #"{"dimmer":"rotate_left","dimmer_steps":3,"encrypted":false}"#,
            source: "bthome-ble test_bthome_event_dimmer_rotate_left_3_steps"),
        Vector(
            "bthome_v1", "02 00 b4 02 10 00 03 0c be0b",
            #"{"packet_id":180,"power_on":false,"voltage":3.006,"encrypted":false}"#,
            source: "bthome-ble test_bthome_multiple_uuids (a real ATC_8D18B2 advertisement)"),
    ]

    @Test(arguments: v1Vectors)
    func decodesVersionOneToGoldenJSON(_ vector: Vector) {
        expectGolden(BTHomeV1Decoder().reading(bytes(vector.hex)), vector)
    }

    /// bthome-ble tests/test_parser_v1.py test_bindkey_correct (and test_v1_encryption.py): plaintext
    /// 2302CA090303BF13, counter 00112233, address 54:48:E6:8F:80:A5, the same key as v2's examples.
    @Test func versionOneEncryptedVectorDecryptsAndSealsBack() throws {
        let payload = bytes("fba435e4d3c312fb 00112233 57d90a99")
        let context = AdvertisementContext(address: Self.address, bindKey: Self.key)
        let reading = BTHomeV1Decoder.encrypted.reading(payload, context: context)
        #expect(
            reading.jsonString()
                == #"{"temperature":25.06,"humidity":50.55,"encrypted":true,"encryption_counter":857870592}"#)
        let nonce = bytes("5448e68f80a5 1e18 00112233")
        let sealed = try AESCCM.seal(
            plaintext: bytes("2302CA090303BF13"), key: Self.key, nonce: nonce, associatedData: [0x11])
        #expect(sealed.ciphertext == bytes("fba435e4d3c312fb"))
        #expect(sealed.tag == bytes("57d90a99"))
        let wrongKey = BTHomeV1Decoder.encrypted.reading(
            payload,
            context: AdvertisementContext(address: Self.address, bindKey: bytes("814aac74c4f17b6c1581e1ab87816b99")))
        #expect(wrongKey.error?.code == .decryptionFailed)
        #expect(BTHomeV1Decoder.encrypted.reading(payload).error?.code == .missingKey)
    }

    /// Random plaintexts, sealed with the key, reach the encrypted decoder's object parser: every
    /// one decodes or gives a typed error naming a field.
    @Test func versionOneEncryptedRandomPlaintextsNeverCrash() async throws {
        var generator = SeededRandomNumberGenerator(seed: 0xB7_4031)
        let context = AdvertisementContext(address: Self.address, bindKey: Self.key)
        var decoded = 0
        for counter in 0..<2_000 {
            if counter % 512 == 0 { await Task.yield() }
            let plaintext = (0..<Int(generator.next() % 24)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let counterBytes = (0..<4).map { UInt8(truncatingIfNeeded: counter >> (8 * $0)) }
            let sealed = try AESCCM.seal(
                plaintext: plaintext, key: Self.key, nonce: bytes("5448e68f80a5 1e18") + counterBytes,
                associatedData: [0x11])
            let reading = BTHomeV1Decoder.encrypted.reading(
                sealed.ciphertext + counterBytes + sealed.tag, context: context)
            if let error = reading.error {
                #expect(error.code != .decryptionFailed && !error.field.isEmpty, "\(Hex.string(plaintext)): \(error)")
            } else {
                decoded += 1
            }
        }
        #expect(decoded > 0)
    }

    @Test func versionOneBadObjectsAreTypedErrors() {
        let short = BTHomeV1Decoder().reading(bytes("23 02 ca"))
        #expect(short.error?.code == .truncated)
        #expect(short.error?.field == "object[0].temperature")
        let empty = BTHomeV1Decoder().reading(bytes("01 02"))
        #expect(empty.error?.code == .invalidValue)
        #expect(empty.error?.field == "object[0].control")
        let oddFloat = BTHomeV1Decoder().reading(bytes("44 06 fe70 00"))
        #expect(oddFloat.error?.code == .invalidValue, "a 3-byte float")
        let registry = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181C)): bytes("02 09 60")], manufacturerData: [:])
        #expect(registry.map(\.decoder) == ["bthome_v1"], "service data 0x181C picks BTHome v1")
    }

    @Test(arguments: vectors)
    func decodesToGoldenJSON(_ vector: Vector) {
        expectGolden(BTHomeDecoder().reading(bytes(vector.hex)), vector)
    }

    /// bthome-ble test_v2_encryption.py, example 1: plaintext 02CA09 03BF13, counter 00112233.
    @Test func encryptedPayloadDecryptsWithTheKnownKey() {
        let context = AdvertisementContext(address: Self.address, bindKey: Self.key)
        let reading = BTHomeDecoder().reading(bytes("41 a47266c95f73 00112233 78237214"), context: context)
        #expect(
            reading.jsonString()
                == #"{"temperature":25.06,"humidity":50.55,"encrypted":true,"trigger_based":false,"encryption_counter":857870592}"#
        )
    }

    /// bthome-ble test_v2_encryption.py, example 2: motion detected.
    @Test func secondPublishedEncryptedVector() {
        let context = AdvertisementContext(address: Self.address, bindKey: Self.key)
        let reading = BTHomeDecoder().reading(bytes("41 87b9 00112233 72b0231f"), context: context)
        #expect(reading["motion"] == .bool(true))
    }

    /// A real Shelly BLU Button capture from bthome-ble test_encrypted_shelly_blu_button_event.
    @Test func realEncryptedShellyButtonCapture() {
        let context = AdvertisementContext(
            address: BluetoothAddress("B4:35:22:F5:3D:A4"), bindKey: bytes("90bffd73cb6b26ef58a7a8eba9232036"))
        let reading = BTHomeDecoder().reading(bytes("450aeb84467f85ba0100003188788c"), context: context)
        #expect(
            reading.jsonString()
                == #"{"packet_id":7,"battery":100,"button":"press","encrypted":true,"trigger_based":true,"encryption_counter":442}"#
        )
    }

    @Test func aWrongKeyGivesAClearDecryptionError() {
        let context = AdvertisementContext(address: Self.address, bindKey: bytes("814aac74c4f17b6c1581e1ab87816b99"))
        let reading = BTHomeDecoder().reading(bytes("41 a47266c95f73 00112233 78237214"), context: context)
        #expect(reading.error?.code == .decryptionFailed)
        #expect(reading.error?.message.contains("wrong bind key") == true)
        #expect(reading.fields.isEmpty)
        #expect(reading.rawHex == "41a47266c95f730011223378237214")
    }

    @Test func aWrongAddressAlsoFailsAuthentication() {
        let context = AdvertisementContext(address: BluetoothAddress("54:48:E6:8F:80:A6"), bindKey: Self.key)
        let reading = BTHomeDecoder().reading(bytes("41 a47266c95f73 00112233 78237214"), context: context)
        #expect(reading.error?.code == .decryptionFailed)
    }

    @Test func encryptedWithoutKeyOrAddressSaysWhatIsMissing() {
        let payload = bytes("41 a47266c95f73 00112233 78237214")
        let noKey = BTHomeDecoder().reading(payload, context: AdvertisementContext(address: Self.address))
        #expect(noKey.error?.code == .missingKey)
        #expect(noKey.error?.field == "bind_key")
        let noAddress = BTHomeDecoder().reading(payload, context: AdvertisementContext(bindKey: Self.key))
        #expect(noAddress.error?.field == "address")
        let shortKey = BTHomeDecoder().reading(
            payload, context: AdvertisementContext(address: Self.address, bindKey: [1, 2, 3]))
        #expect(shortKey.error?.code == .missingKey)
        let truncated = BTHomeDecoder().reading(
            bytes("41 001122"), context: AdvertisementContext(address: Self.address, bindKey: Self.key))
        #expect(truncated.error?.code == .truncated)
    }

    @Test func sealThenOpenRoundTrips() throws {
        let nonce = Self.address.bytes + [0xD2, 0xFC, 0x41] + [0x00, 0x11, 0x22, 0x33]
        let sealed = try AESCCM.seal(plaintext: bytes("02CA0903BF13"), key: Self.key, nonce: nonce)
        #expect(sealed.ciphertext == bytes("a47266c95f73"))
        #expect(sealed.tag == bytes("78237214"))
        #expect(
            try AESCCM.open(ciphertext: sealed.ciphertext, tag: sealed.tag, key: Self.key, nonce: nonce)
                == bytes("02CA0903BF13"))
    }

    @Test func otherVersionsAndBadObjectsAreTypedErrors() {
        #expect(BTHomeDecoder().reading(bytes("20 02ca09")).error?.code == .unsupported)
        #expect(BTHomeDecoder().reading([]).error?.field == "device_information")
        let cut = BTHomeDecoder().reading(bytes("40 02ca"))
        #expect(cut.error?.code == .truncated)
        #expect(cut.error?.field == "object[0].temperature")
        #expect(BTHomeDecoder().reading(bytes("40 2102")).error?.code == .invalidValue)
        #expect(BTHomeDecoder().reading(bytes("40 5305 4142")).error?.field == "object[0].text")
    }

    /// The date of the specification `objectLengths` was checked against: bthome.io/format as
    /// published from github.com/home-assistant/bthome.io, src/format.html at 0cf388b
    /// (2026-04-30, "move command object from 0xE0 to 0x3B"), after 0x65 settings revision
    /// (2026-04-29) and 0x64 light level (2026-03-02). A newer spec with new ids fails
    /// `noIDOutsideTheSpecificationIsDecoded` only once someone adds them here and to the decoder.
    static let specificationDate = "2026-04-30"

    /// Every object id of the specification with its data length, written independently of the
    /// decoder's table: a payload of `id` followed by that many bytes must decode to one field
    /// with no bytes left over. Variable-length objects (0x3B command, 0x53 text, 0x54 raw) are
    /// listed with the length their 0x01-filled example has.
    static let objectLengths: [(UInt8, Int, String)] = [
        (0x00, 1, "packet_id"), (0x01, 1, "battery"), (0x02, 2, "temperature"), (0x03, 2, "humidity"),
        (0x04, 3, "pressure"), (0x05, 3, "illuminance"), (0x06, 2, "weight"), (0x07, 2, "weight"),
        (0x08, 2, "dew_point"), (0x09, 1, "count"), (0x0A, 3, "energy"), (0x0B, 3, "power"), (0x0C, 2, "voltage"),
        (0x0D, 2, "pm25"), (0x0E, 2, "pm10"), (0x0F, 1, "generic"), (0x10, 1, "power_on"), (0x11, 1, "opening"),
        (0x12, 2, "co2"), (0x13, 2, "tvoc"), (0x14, 2, "moisture"), (0x15, 1, "battery_low"),
        (0x16, 1, "battery_charging"), (0x17, 1, "carbon_monoxide"), (0x18, 1, "cold"), (0x19, 1, "connectivity"),
        (0x1A, 1, "door"), (0x1B, 1, "garage_door"), (0x1C, 1, "gas_detected"), (0x1D, 1, "heat"), (0x1E, 1, "light"),
        (0x1F, 1, "lock"), (0x20, 1, "moisture_detected"), (0x21, 1, "motion"), (0x22, 1, "moving"),
        (0x23, 1, "occupancy"), (0x24, 1, "plug"), (0x25, 1, "presence"), (0x26, 1, "problem"), (0x27, 1, "running"),
        (0x28, 1, "safety"), (0x29, 1, "smoke"), (0x2A, 1, "sound"), (0x2B, 1, "tamper"), (0x2C, 1, "vibration"),
        (0x2D, 1, "window"), (0x2E, 1, "humidity"), (0x2F, 1, "moisture"), (0x3A, 1, "button"), (0x3B, 3, "command"),
        (0x3C, 2, "dimmer"),
        (0x3D, 2, "count"), (0x3E, 4, "count"), (0x3F, 2, "rotation"), (0x40, 2, "distance"), (0x41, 2, "distance"),
        (0x42, 3, "duration"), (0x43, 2, "current"), (0x44, 2, "speed"), (0x45, 2, "temperature"),
        (0x46, 1, "uv_index"),
        (0x47, 2, "volume"), (0x48, 2, "volume"), (0x49, 2, "volume_flow_rate"), (0x4A, 2, "voltage"), (0x4B, 3, "gas"),
        (0x4C, 4, "gas"), (0x4D, 4, "energy"), (0x4E, 4, "volume"), (0x4F, 4, "water"), (0x50, 4, "timestamp"),
        (0x51, 2, "acceleration"), (0x52, 2, "gyroscope"), (0x53, 2, "text"), (0x54, 2, "raw"),
        (0x55, 4, "volume_storage"), (0x56, 2, "conductivity"), (0x57, 1, "temperature"), (0x58, 1, "temperature"),
        (0x59, 1, "count"), (0x5A, 2, "count"), (0x5B, 4, "count"), (0x5C, 4, "power"), (0x5D, 2, "current"),
        (0x5E, 2, "direction"), (0x5F, 2, "precipitation"), (0x60, 1, "channel"), (0x61, 2, "rotational_speed"),
        (0x62, 4, "speed"), (0x63, 4, "acceleration"), (0x64, 1, "light_level"), (0x65, 1, "settings_revision"),
        (0xF0, 2, "device_type_id"),
        (0xF1, 4, "firmware_version"), (0xF2, 3, "firmware_version"),
    ]

    @Test func everyObjectIDOfTheSpecificationDecodes() throws {
        for (id, length, name) in Self.objectLengths {
            // 0x01 bytes are valid for every type (binary 1, text/raw length 1 then one byte).
            let payload = [0x40, id] + [UInt8](repeating: 0x01, count: length)
            let fields = try BTHomeDecoder().decode(payload, context: AdvertisementContext())
            #expect(fields.first?.name == name, "object 0x\(Hex.string([id]))")
            #expect(!fields.contains { $0.name == "undecoded_object_id" }, "object 0x\(Hex.string([id]))")
            #expect(BTHomeDecoder().reading(Array(payload.dropLast())).error?.code == .truncated)
        }
    }

    /// The other direction: every id the specification of `specificationDate` does not define is
    /// unknown to the decoder, so the decoder's table is exactly the specification's.
    @Test func noIDOutsideTheSpecificationIsDecoded() {
        let specified = Set(Self.objectLengths.map(\.0))
        #expect(specified.count == Self.objectLengths.count, "no id listed twice")
        #expect(specified.count == 95, "ids of bthome.io/format on \(Self.specificationDate)")
        for id in UInt8.min...UInt8.max where !specified.contains(id) {
            let reading = BTHomeDecoder().reading([0x40, id])
            #expect(reading["undecoded_object_id"] == .string("0x" + Hex.string([id])), "object 0x\(Hex.string([id]))")
        }
    }

    /// The issue's bar: the settings revision (0x65) before a temperature, out of the order the
    /// specification asks for, as bthome-ble decodes it.
    @Test func settingsRevisionThenTemperature() {
        let reading = BTHomeDecoder().reading(bytes("40 65b1 02ca09"))
        #expect(reading.error == nil)
        #expect(reading["settings_revision"] == .int(177))
        #expect(reading["temperature"] == .double(25.06))
    }

    static let commandVectors: [Vector] = [
        Vector(
            "bthome", "40 3b0000", #"{"command":"off","command_opcode":0,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format events: 3B0000 = off"),
        Vector(
            "bthome", "40 3b0001", #"{"command":"on","command_opcode":1,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format events: 3B0001 = on"),
        Vector(
            "bthome", "40 3b0002", #"{"command":"toggle","command_opcode":2,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format events: 3B0002 = toggle"),
        Vector(
            "bthome", "40 3b010305",
            #"{"command":"step_up","command_opcode":3,"command_steps":5,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format events: 3B010305 = step up 5 steps"),
        Vector(
            "bthome", "40 3b010405",
            #"{"command":"step_down","command_opcode":4,"command_steps":5,"encrypted":false,"trigger_based":false}"#,
            source: "bthome.io/format events: 3B010405 = step down 5 steps"),
        Vector(
            "bthome", "40 3be10305 015d",
            #"{"command":"step_up","command_opcode":3,"command_steps":5,"battery":93,"encrypted":false,"trigger_based":false}"#,
            source: "the length byte's reserved high 3 bits are ignored; the object after it is read"),
        Vector(
            "bthome", "40 3b02 0a 0102 015d",
            #"{"command":null,"command_opcode":10,"command_arguments":"0102","battery":93,"encrypted":false,"trigger_based":false}"#,
            source: "an opcode the spec does not name (manufacturer-specific): null with the opcode and arguments"),
        Vector(
            "bthome", "40 02ca09 66aabb f00100",
            #"{"temperature":25.06,"undecoded_object_id":"0x66","undecoded_hex":"66aabb","device_type_id":1,"encrypted":false,"trigger_based":false}"#,
            source:
                "an unknown id whose length only one choice (2 bytes) makes the rest decode in id order: the rest is kept"
        ),
        Vector(
            "bthome", "40 7001 02ca09",
            #"{"undecoded_object_id":"0x70","undecoded_hex":"700102ca09","encrypted":false,"trigger_based":false}"#,
            source: "objects after an unknown id with a lower id break the spec's order: parsing stops as the spec says"
        ),
        Vector(
            "bthome", "40 66 f0f00100",
            #"{"undecoded_object_id":"0x66","undecoded_hex":"66f0f00100","encrypted":false,"trigger_based":false}"#,
            source:
                "an unknown id where 1 byte (then F0 = 1) and 4 bytes (then nothing) both fit: ambiguous, parsing stops"
        ),
        Vector(
            "bthome", "40 02ca09 7001",
            #"{"temperature":25.06,"undecoded_object_id":"0x70","undecoded_hex":"7001","encrypted":false,"trigger_based":false}"#,
            source: "an unknown id at the end: the fields before it are kept"),
    ]

    @Test(arguments: commandVectors)
    func commandsAndUnknownIDsDecodeToGoldenJSON(_ vector: Vector) {
        expectGolden(BTHomeDecoder().reading(bytes(vector.hex)), vector)
    }

    @Test func aCutCommandIsATypedError() {
        let cut = BTHomeDecoder().reading(bytes("40 3b0203 05"))
        #expect(cut.error?.code == .truncated)
        #expect(cut.error?.field == "object[0].command.arguments")
        #expect(BTHomeDecoder().reading(bytes("40 3b00")).error?.field == "object[0].command.opcode")
    }
}

@Suite struct BTHomePacketFilterTests {
    private func reading(_ hex: String) -> DecodedReading { BTHomeDecoder().reading(bytes(hex)) }

    @Test func repeatedPacketIDsAreDuplicates() {
        var filter = BTHomePacketFilter()
        #expect(filter.judge(reading("40 0001 015d")) == .new)
        #expect(filter.judge(reading("40 0001 015d")) == .duplicate)
        #expect(filter.judge(reading("40 0002 015c")) == .new)
        #expect(filter.judge(reading("40 015c")) == .new, "no packet id: always new")
    }

    @Test func aLowerEncryptionCounterIsAReplay() {
        var filter = BTHomePacketFilter()
        let newer = DecodedReading(
            decoder: "bthome", fields: [DecodedField(name: "encryption_counter", value: .int(10))], raw: [])
        let older = DecodedReading(
            decoder: "bthome", fields: [DecodedField(name: "encryption_counter", value: .int(9))], raw: [])
        #expect(filter.judge(newer) == .new)
        #expect(filter.judge(older) == .replayed)
    }
}
