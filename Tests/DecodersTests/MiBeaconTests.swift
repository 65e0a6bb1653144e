import Bluetooth
import Decoders
import Testing

/// Xiaomi MiBeacon (service data 0xFE95). The encrypted vectors were sealed with `key` by
/// scripts/differential/oracle.py (its `mibeacon_frame`) and decoded to the same values by the
/// reference parser xiaomi-ble 1.21.2 (which floors LYWSD03MMC humidity: 51 there, 51.7 here).
@Suite struct MiBeaconTests {
    static let fe95 = BluetoothUUID(UInt16(0xFE95))
    static let key = bytes("814aac74c4f17b6c1581e1ab87816b99")
    static let address = BluetoothAddress("A4:C1:38:56:53:84")!
    static let context = AdvertisementContext(address: address, bindKey: key)

    static func decode(_ hex: String, context: AdvertisementContext = context) -> DecodedReading {
        MiBeaconDecoder().reading(bytes(hex), context: context)
    }

    @Test func decodesEncryptedV5TemperatureOfALYWSD03MMC() {
        let reading = Self.decode("58585b05a084535638c1a475dbc33f642301004a1668a5")
        #expect(
            reading.jsonString()
                == #"{"product_id":1371,"model":"LYWSD03MMC","packet_id":160,"encrypted":true,"encryption_counter":74656,"temperature":21.5}"#
        )
    }

    @Test func decodesEncryptedHumidityBatteryAndTwoObjectsInOneFrame() {
        #expect(Self.decode("58585b05a184535638c1a416859c1d9a23010073329fa4")["humidity"] == .double(51.7))
        #expect(Self.decode("58585b05a284535638c1a42d32ffaa2301005b767498")["battery"] == .int(93))
        let both = Self.decode("58585b05a384535638c1a482b08f41311a22ad204c230100ea7e6752")
        #expect(both["temperature"] == .double(-8.5))
        #expect(both["humidity"] == .double(40.3))
    }

    @Test func takesTheAddressFromTheContextWhenTheFrameHasNone() {
        let reading = Self.decode("48505b05a429abb67ee423010087b88a01")
        #expect(reading["temperature"] == .double(21.5))
        let withoutAddress = Self.decode(
            "48505b05a429abb67ee423010087b88a01", context: AdvertisementContext(bindKey: Self.key))
        #expect(withoutAddress.error?.code == .missingKey)
        #expect(withoutAddress.error?.field == "address")
    }

    @Test func aWrongKeySaysTheBindKeyDoesNotMatch() {
        let reading = Self.decode(
            "58585b05a084535638c1a475dbc33f642301004a1668a5",
            context: AdvertisementContext(address: Self.address, bindKey: [UInt8](repeating: 7, count: 16)))
        #expect(reading.error?.code == .decryptionFailed)
        #expect(reading.error?.field == "bind_key")
        #expect(reading.error?.message.hasPrefix("the bind key does not match") == true)
        #expect(reading.fields.isEmpty)
    }

    @Test func anEncryptedFrameWithoutAKeyNeedsOne() {
        let reading = Self.decode(
            "58585b05a084535638c1a475dbc33f642301004a1668a5", context: AdvertisementContext(address: Self.address))
        #expect(reading.error?.code == .missingKey)
        #expect(reading.error?.field == "bind_key")
    }

    @Test func aTamperedFrameFailsAuthentication() {
        // One ciphertext bit flipped.
        let reading = Self.decode("58585b05a084535638c1a474dbc33f642301004a1668a5")
        #expect(reading.error?.code == .decryptionFailed)
    }

    @Test func decodesPlainV2ToV5FramesAndTheirCommonObjects() {
        // LYWSDCGQ v2 (frame control 0x2050: address, objects), temperature and humidity object 0x100D.
        let th = Self.decode("5020aa01 3f 84535638c1a4 0d1004 d700 1502", context: AdvertisementContext())
        #expect(th["model"] == .string("LYWSDCGQ"))
        #expect(th["temperature"] == .double(21.5))
        #expect(th["humidity"] == .double(53.3))
        #expect(th["encrypted"] == .bool(false))
        // HHCCJCY01 v3 plant sensor: illuminance, moisture, conductivity in one frame, no address.
        let plant = Self.decode("40309800 01 071003 102700 081001 2a 091002 5e01", context: AdvertisementContext())
        #expect(plant["illuminance"] == .int(10000))
        #expect(plant["moisture"] == .int(42))
        #expect(plant["conductivity"] == .int(350))
        // Formaldehyde (JQJCY01YM) with a capability byte (0x28: I/O capability byte follows).
        let formaldehyde = Self.decode("6040df02 02 28 00 101002 0f00", context: AdvertisementContext())
        #expect(formaldehyde["formaldehyde"] == .double(0.15))
        // Door sensor MCCGQ02HL: 2 is "left open".
        let door = Self.decode("40508b09 05 191001 02", context: AdvertisementContext())
        #expect(door["opening"] == .bool(true))
        #expect(door["door_left_open"] == .bool(true))
        // Negative temperature, switch, smoke, leak, light, no-motion time, motion with illuminance.
        let mixed = Self.decode(
            "40500000 07 0410029cff 121001 01 151001 00 141001 01 181001 00 17100478000000 0f0003640000",
            context: AdvertisementContext())
        #expect(mixed["temperature"] == .double(-10.0))
        #expect(mixed["power_on"] == .bool(true))
        #expect(mixed["smoke"] == .bool(false))
        #expect(mixed["moisture_detected"] == .bool(true))
        #expect(mixed["light"] == .bool(false))
        #expect(mixed["no_motion_time"] == .int(120))
        #expect(mixed["motion"] == .bool(true))
        #expect(mixed["illuminance"] == .int(100))
        #expect(mixed["product_id"] == .int(0))
        #expect(mixed["model"] == nil)
    }

    @Test func anUnknownObjectIsKeptAsHexAndDoesNotHideTheNext() {
        let reading = Self.decode("40505b05 09 014c03 aabbcc 0a1001 64", context: AdvertisementContext())
        #expect(reading["object_0x4c01"] == .string("aabbcc"))
        #expect(reading["battery"] == .int(100))
    }

    @Test func aFrameWithoutObjectsDecodesToItsHeader() {
        let reading = Self.decode("10505b05 0c 84535638c1a4", context: AdvertisementContext())
        #expect(reading.isSuccess)
        #expect(names(reading.fields) == ["product_id", "model", "packet_id", "encrypted"])
    }

    /// The button object 0x1001 (button, value, press type) read per model: the K9B switches swap
    /// double and long press, byte 0 picks the buttons of multi-button switches and remotes, the
    /// dimmer and the cube have events of their own; an unknown model's codes stay raw.
    @Test(arguments: [
        ("8d0a", "000000", ["button=press"]),  // RTCGQ02LM
        ("bf07", "000001", ["button=double_press"]),  // YLAI003
        ("bf07", "000002", ["button=long_press"]),
        ("6815", "000001", ["button=long_press"]),  // K9B-1BTN
        ("6915", "020002", ["button_left=double_press", "button_right=double_press"]),  // K9B-2BTN
        ("fd0d", "040000", ["button_middle=press", "button_right=press"]),  // K9B-3BTN
        ("5301", "030002", ["button_plus=long_press"]),  // YLYK01YL
        ("bf03", "080000", ["button_heat=press"]),  // YLYB01YL-BHFRC
        ("b603", "000503", ["dimmer=press", "dimmer_presses=5"]),  // YLKG07YL
        ("b603", "010203", ["dimmer=long_press", "dimmer_duration=2"]),
        ("b603", "00fd04", ["dimmer=rotate_left", "dimmer_steps=3"]),
        ("b603", "000404", ["dimmer=rotate_right", "dimmer_steps=4"]),
        ("b603", "020004", ["dimmer=rotate_right_pressed", "dimmer_steps=2"]),
        ("b603", "fe0004", ["dimmer=rotate_left_pressed", "dimmer_steps=2"]),
        ("e104", "010000", ["cube=rotate_left"]),  // XMMF01JQD
        ("3412", "010002", ["button_index=1", "button_value=0", "button_press_code=2"]),  // not a known model
        ("6915", "050000", ["button_index=5", "button_value=0", "button_press_code=0"]),  // no such button
        ("bf07", "000007", ["button_index=0", "button_value=0", "button_press_code=7"]),  // no such press type
    ])
    func decodesTheButtonObjectPerModel(product: String, data: String, expected: [String]) {
        let reading = Self.decode("4050" + product + "01 011003" + data, context: AdvertisementContext())
        let header: Set = ["product_id", "model", "packet_id", "encrypted"]
        let fields = reading.fields.filter { !header.contains($0.name) }.map { field -> String in
            switch field.value {
            case .string(let text): "\(field.name)=\(text)"
            case .int(let number): "\(field.name)=\(number)"
            default: "\(field.name)=\(field.value)"
            }
        }
        #expect(fields == expected, "\(String(describing: reading.error))")
        for field in reading.fields where expected.contains(where: { $0.hasPrefix(field.name + "=") }) {
            if case .string(let type) = field.value {
                #expect(field.kind.component == .event)
                #expect(field.kind.eventTypes.contains(type), "\(field.name): \(field.kind.eventTypes)")
            } else {
                #expect(field.kind.component == .attribute)
            }
        }
    }

    @Test(arguments: [
        ("40505b05", DecoderError.Code.truncated, "frame_counter"),
        ("4050 8d0a 01 0110 02 0000", .invalidValue, "object[0].button"),  // the button object is 3 bytes
        ("0010 5b05 01", .unsupported, "frame_control"),  // version 1
        ("c050 5b05 01 0410 02 d700", .unsupported, "frame_control"),  // mesh
        ("4830 5b05 01 0410 02 d700 000000 00000000", .unsupported, "frame_control"),  // v3 (legacy) encryption
        ("4050 5b05 01 0410 01 d7", .invalidValue, "object[0].temperature"),  // wrong object length
        ("4050 5b05 01 0410 02 d7", .truncated, "object[0].data"),
        ("4050 8b09 01 1910 01 07", .invalidValue, "object[0].opening"),  // door state 7
        ("5050 5b05 01 112233445566 0410 02 d700", .invalidValue, "address"),  // not the advertiser's
        ("4050 5b05 01 0410 02 d700 00", .truncated, "object[1].id"),
    ])
    func rejectsMalformedFramesWithTheFieldThatFailed(hex: String, code: DecoderError.Code, field: String) {
        let reading = Self.decode(hex, context: AdvertisementContext(address: Self.address))
        #expect(reading.error?.code == code, "\(hex): \(String(describing: reading.error))")
        #expect(reading.error?.field == field, "\(hex): \(String(describing: reading.error))")
    }

    @Test func theRegistryChoosesMiBeaconForFE95() {
        let readings = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [Self.fe95: bytes("58585b05a084535638c1a475dbc33f642301004a1668a5")], manufacturerData: [:],
            context: Self.context)
        #expect(readings.map(\.decoder) == ["mibeacon"])
        #expect(readings.first?["temperature"] == .double(21.5))
    }

    @Test func repeatsAreDuplicatesAndOlderCountersReplays() {
        var filter = BTHomePacketFilter()
        let first = Self.decode("58585b05a084535638c1a475dbc33f642301004a1668a5")
        let second = Self.decode("58585b05a184535638c1a416859c1d9a23010073329fa4")
        #expect(filter.judge(first) == .new)
        #expect(filter.judge(first) == .duplicate)
        #expect(filter.judge(second) == .new)
        #expect(filter.judge(first) == .replayed)
        #expect(BTHomePacketFilter.decoders.contains(MiBeaconDecoder().name))
    }
}
