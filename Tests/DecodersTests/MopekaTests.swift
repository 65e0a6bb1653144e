import Bluetooth
import Decoders
import Testing

/// Mopeka Pro (manufacturer data 0x0059 with service 0xFEE5). The vectors are built from the
/// advertisement layout; `DifferentialSuiteTests` checks 10,000 more against mopeka-iot-ble.
@Suite struct MopekaTests {
    static func decode(_ hex: String, services: [BluetoothUUID] = [BluetoothUUID(UInt16(0xFEE5))]) -> DecodedReading? {
        DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [0x0059: bytes(hex)],
            context: AdvertisementContext(serviceUUIDs: services)
        ).first
    }

    @Test func proCheckOnAPropaneBottle() {
        // 3.0 V, 20 °C (byte 60), raw level 1,000 with quality 3: 1000 × (0.573045 − 0.002822·60
        // − 0.00000535·3600) = 384.465 → 384 mm.
        #expect(
            Self.decode("03603ce8c311223305fa")?.jsonString()
                == #"{"model":"M1017","product":"Pro Check","device_type":3,"battery":100,"battery_voltage":3,"temperature":20,"button_pressed":false,"tank_level_raw":1000,"tank_level":384,"reading_quality":100,"reading_quality_raw":3,"mac_suffix":"11:22:33","accelerometer_x":5,"accelerometer_y":250}"#
        )
    }

    @Test func lowQualityHasNoLevelAndTheButton() {
        let reading = Self.decode("0850bce80311223300" + "00")
        #expect(reading?["battery"] == .double(46.2))
        #expect(reading?["button_pressed"] == .bool(true))
        #expect(reading?["temperature"] == .int(20))
        #expect(reading?["tank_level"] == nil)
        #expect(reading?["reading_quality"] == .int(0))
    }

    @Test func onlyWithItsServiceAndShape() {
        #expect(Self.decode("03603ce8c311223305fa", services: []) == nil)
        #expect(Self.decode("01603ce8c311223305fa") == nil)
        #expect(Self.decode("03603ce8c311223305") == nil)
        let forced = MopekaDecoder().reading(bytes("4c00" + "03603ce8c311223305fa"))
        #expect(forced.error?.field == "company_id")
        #expect(MopekaDecoder().reading(bytes("5900" + "03603ce8c3112233")).error?.code == .truncated)
    }
}
