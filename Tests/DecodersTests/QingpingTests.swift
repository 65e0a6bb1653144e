import Bluetooth
import Decoders
import Testing

/// Qingping (service data 0xFDCD). The vectors are built from the Qingping advertisement layout
/// (frame control, device type, reversed address, `id, length, data` objects);
/// `DifferentialSuiteTests` checks 10,000 more against qingping-ble.
@Suite struct QingpingTests {
    /// 58:2D:34:10:20:30, reversed as sent.
    static let mac = "302010342d58"

    static func decode(_ control: String, _ type: String, _ objects: String) -> DecodedReading {
        let readings = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0xFDCD)): bytes(control + type + mac + objects)], manufacturerData: [:])
        return readings.first ?? DecodedReading(decoder: "none", fields: [], raw: [])
    }

    @Test func thermometer() {
        // CGG1: 23.0 °C, 50.0 %, battery 85.
        #expect(
            Self.decode("08", "07", "0104e600f401020155").jsonString()
                == #"{"model":"CGG1","device_type":7,"mac":"58:2D:34:10:20:30","event":false,"temperature":23,"humidity":50,"battery":85}"#
        )
        #expect(Self.decode("08", "07", "010418fcf401")["temperature"] == .double(-100))
    }

    @Test func externallyPoweredIsAFullBattery() {
        let reading = Self.decode("08", "0e", "0201ff")
        #expect(reading["battery"] == .int(100))
        #expect(reading["external_power"] == .bool(true))
        #expect(Self.decode("08", "0e", "020164")["external_power"] == nil)
    }

    @Test func doorSensor() {
        let leftOpen = Self.decode("08", "04", "0401020201" + "64")
        #expect(leftOpen["model"] == .string("CGH1"))
        #expect(leftOpen["opening"] == .bool(true))
        #expect(leftOpen["door_left_open"] == .bool(true))
        #expect(Self.decode("08", "04", "040100")["opening"] == .bool(true))
        #expect(Self.decode("08", "04", "040101")["opening"] == .bool(false))
        #expect(Self.decode("08", "04", "040103").error?.code == .invalidValue)
    }

    @Test func motionAndLightWithoutIlluminanceInEvents() {
        let reading = Self.decode("08", "12", "08040164000a110101")
        #expect(reading["motion"] == .bool(true))
        #expect(reading["illuminance"] == .int(655_460))
        #expect(reading["light"] == .bool(true))
        let event = Self.decode("48", "12", "08040164000a")
        #expect(event["event"] == .bool(true))
        #expect(event["motion"] == .bool(true))
        #expect(event["illuminance"] == nil)
        #expect(Self.decode("08", "12", "090420a10700")["illuminance"] == .int(500_000))
    }

    @Test func airMonitorAndBarometer() {
        let air = Self.decode("08", "0e", "12040a0014001302e8031502640019012a")
        #expect(air["model"] == .string("CGDN1"))
        #expect(air["pm25"] == .int(10))
        #expect(air["pm10"] == .int(20))
        #expect(air["co2"] == .int(1000))
        #expect(air["voc_index"] == .int(100))
        #expect(air["noise"] == .int(42))
        #expect(Self.decode("08", "26", "0702c826")["pressure"] == .double(992.8))
    }

    @Test func strictAboutLengthsKeepsUnknownObjects() {
        let bad = Self.decode("08", "07", "0103010203")
        #expect(bad.error?.code == .invalidValue)
        #expect(bad.error?.field == "object_0x01")
        let cut = Self.decode("08", "07", "0104e600")
        #expect(cut.error?.code == .truncated)
        #expect(cut.error?.field == "object_0x01")
        #expect(Self.decode("08", "07", "3002aabb")["object_0x30"] == .string("aabb"))
        #expect(Self.decode("08", "07", "020155020155").error?.code == .invalidValue)
        // A type the table does not know still decodes, without a model.
        let unknown = Self.decode("08", "7f", "020155")
        #expect(unknown["model"] == nil)
        #expect(unknown["battery"] == .int(85))
        #expect(QingpingDecoder().reading(bytes("0807302010")).error?.code == .truncated)
    }
}
