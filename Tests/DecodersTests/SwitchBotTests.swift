import Bluetooth
import Decoders
import Testing

/// SwitchBot (service data 0xFD3D, manufacturer data 0x0969). The vectors are built from
/// SwitchBot's published advertisement layout (type letter, status bits, battery, the 3-byte
/// temperature and humidity); `DifferentialSuiteTests` checks 10,000 more against pyswitchbot.
@Suite struct SwitchBotTests {
    static let fd3d = BluetoothUUID(UInt16(0xFD3D))

    static func decode(_ service: String, manufacturer: String? = nil) -> DecodedReading {
        let readings = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [fd3d: bytes(service)], manufacturerData: manufacturer.map { [0x0969: bytes($0)] } ?? [:])
        return readings.first ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }

    @Test func meterFromServiceData() {
        // 'T', battery 0xE4 & 0x7F = 100, 0.7 + 25 (bit 7: above zero) °C, 45 % shown in °C.
        #expect(
            Self.decode("5400e407992d").jsonString()
                == #"{"model":"Meter","battery":100,"temperature":25.7,"humidity":45,"fahrenheit_display":false}"#)
        let below = Self.decode("540064050582")
        #expect(below["temperature"] == .double(-5.5))
        #expect(below["humidity"] == .int(2))
        #expect(below["fahrenheit_display"] == .bool(true))
        #expect(below.decoder == "switchbot")
    }

    @Test func outdoorMeterReadsItsManufacturerData() {
        let reading = Self.decode("770064", manufacturer: "aabbccddeeff0e0003963700")
        #expect(
            reading.jsonString()
                == #"{"model":"Outdoor Meter","battery":100,"temperature":22.3,"humidity":55,"fahrenheit_display":false,"mac":"AA:BB:CC:DD:EE:FF","sequence":14}"#
        )
        // The manufacturer data is the live reading: it wins over the service data's.
        #expect(Self.decode("6900e407992d", manufacturer: "aabbccddeeff0e0003963700")["temperature"] == .double(22.3))
    }

    @Test func meterProCO2() {
        let reading = Self.decode("350064", manufacturer: "aabbccddeeff0100019932000003e8")
        #expect(reading["model"] == .string("Meter Pro CO2"))
        #expect(reading["co2"] == .int(1000))
        #expect(reading["temperature"] == .double(25.1))
        #expect(reading["humidity"] == .int(50))
        // Above the sensor's 9,999 ppm range: a transient, left out.
        #expect(Self.decode("350064", manufacturer: "aabbccddeeff01000199320000ffff")["co2"] == nil)
    }

    @Test func aMeterThatHasNotMeasuredPublishesOnlyItsBattery() {
        let reading = Self.decode("540064000000")
        #expect(reading.isSuccess)
        #expect(reading["temperature"] == nil)
        #expect(reading["battery"] == .int(100))
    }

    @Test func contactSensor() {
        // Motion, battery 85, door bits 0x03: light, open; two button presses.
        #expect(
            Self.decode("644055030000000002").jsonString()
                == #"{"model":"Contact Sensor","battery":85,"tested":false,"motion":true,"opening":true,"door_left_open":false,"light":true,"button_count":2}"#
        )
        // Newer firmware: the state byte of the manufacturer data (0x30: open and left open).
        let live = Self.decode("644055000000000002", manufacturer: "aabbccddeeff07300000000005")
        #expect(live["opening"] == .bool(true))
        #expect(live["door_left_open"] == .bool(true))
        #expect(live["motion"] == .bool(false))
        #expect(live["button_count"] == .int(5))
        let short = Self.decode("64405503")
        #expect(short.error?.code == .truncated)
        #expect(short.error?.field == "reserved")
    }

    @Test func motionSensor() {
        // Tested, motion, battery 90; settings 0x26: LED on, IoT off, sense distance 1, light level 2.
        #expect(
            Self.decode("73c05a000026").jsonString()
                == #"{"model":"Motion Sensor","battery":90,"tested":true,"motion":true,"light":true,"led":true,"iot":false,"sense_distance":1,"light_level":2}"#
        )
        let live = Self.decode("73c05a000026", manufacturer: "aabbccddeeff0100")
        #expect(live["motion"] == .bool(false))
        #expect(live["light"] == .bool(false))
    }

    @Test func botStateOnlyInSwitchMode() {
        #expect(
            Self.decode("48805f").jsonString() == #"{"model":"Bot","battery":95,"switch_mode":true,"power_on":true}"#)
        #expect(Self.decode("48c05f")["power_on"] == .bool(false))
        #expect(Self.decode("48005f").jsonString() == #"{"model":"Bot","battery":95,"switch_mode":false}"#)
    }

    @Test func otherDeviceTypesAreNotClaimed() {
        let decoder = SwitchBotDecoder()
        #expect(!decoder.accepts(bytes("410064")))
        #expect(decoder.accepts(bytes("d40064")))  // bit 7 is not part of the type
        #expect(decoder.reading(bytes("410064")).error?.code == .unsupported)
        #expect(decoder.reading([]).error?.code == .truncated)
    }

    @Test func olderFirmwareServiceDataUUID() {
        let readings = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x0D00)): bytes("48805f")], manufacturerData: [:])
        #expect(readings.first?.decoder == "switchbot_0d00")
        #expect(readings.first?["power_on"] == .bool(true))
    }
}
