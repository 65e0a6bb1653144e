import Bluetooth
import Decoders
import Testing

/// ThermoPro TP35x/TP39x: vectors from the frame description in docs/decoders.md ("ThermoPro").
/// The company id BlueZ reports holds the tag byte and the temperature's low byte.
@Suite struct ThermoProTests {
    @Test func readingWithLowBattery() {
        // On air: c2 e5 00 2f 2c 02 → 0x00E5 = 229 → 22.9 °C, 47 %, status 0x2C: battery bits 00.
        let readings = manufacturerReadings(0xE5C2, "00 2f 2c 02", name: "TP357 (2B54)")
        #expect(readings.map(\.decoder) == ["thermopro"])
        #expect(
            readings.first?.jsonString()
                == #"{"temperature":22.9,"humidity":47,"battery":1,"battery_low":true,"model":"TP357"}"#)
    }

    @Test func negativeTemperatureAndFullBattery() {
        // c2 ce ff 37 02 00: 0xFFCE = −50 → −5.0 °C, 55 %, battery bits 10 (full).
        #expect(
            manufacturerReadings(0xCEC2, "ff 37 02 00", name: "TP393").first?.jsonString()
                == #"{"temperature":-5,"humidity":55,"battery":100,"battery_low":false,"model":"TP393"}"#)
    }

    @Test func noReadingAndNoBatteryLevel() {
        // Temperature and humidity 0xFFFFFF: no reading; status bits 11: no battery level.
        #expect(
            manufacturerReadings(0xFFC2, "ff ff 03 00", name: "TP357S").first?.jsonString()
                == #"{"temperature":null,"humidity":null,"model":"TP357S"}"#)
    }

    @Test func onlyWithAThermoProNameAndSixBytes() {
        #expect(manufacturerReadings(0xE5C2, "00 2f 2c 02", name: nil).isEmpty)
        #expect(manufacturerReadings(0xE5C2, "00 2f 2c 02", name: "TP960").isEmpty)
        #expect(manufacturerReadings(0xE5C2, "00 2f 2c", name: "TP357").isEmpty)
        let forced = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [:], manufacturerData: [0xE5C2: bytes("00 2f")], decoder: "thermopro")
        #expect(forced.first?.error?.code == .truncated)
    }
}
