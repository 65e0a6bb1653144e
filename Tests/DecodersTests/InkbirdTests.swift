import Bluetooth
import Decoders
import Testing

/// INKBIRD hygrometers and BBQ thermometers: vectors from the frame descriptions in
/// docs/decoders.md ("INKBIRD"); the company id BlueZ reports holds the frame's first two bytes.
@Suite struct InkbirdTests {
    @Test func ibsTH1() {
        // 0x0929 = 2345 → 23.45 °C (the company id), 0x162E = 5678 → 56.78 %, battery 0x55 = 85 %.
        let readings = manufacturerReadings(0x0929, "2e16 000000 55 08", name: "sps")
        #expect(readings.map(\.decoder) == ["inkbird"])
        #expect(
            readings.first?.jsonString()
                == #"{"temperature":23.45,"humidity":56.78,"battery":85,"model":"IBS-TH"}"#)
    }

    @Test func ibsP01BWithoutHumiditySensor() {
        // tps with humidity 0xFFFF (firmware 2.3.0) or 0: no humidity field; −1.5 °C = 0xFF6A.
        #expect(
            manufacturerReadings(0xFF6A, "ffff 000000 64 00", name: "tps").first?.jsonString()
                == #"{"temperature":-1.5,"battery":100,"model":"IBS-TH2/P01B"}"#)
        #expect(manufacturerReadings(0xFF6A, "0000 000000 64 00", name: "tps").first?["humidity"] == nil)
        #expect(manufacturerReadings(0xFF6A, "0000 000000 64 00", name: "sps").first?["humidity"] == .double(0))
    }

    @Test func ith11B() {
        // 6 header bytes (the first two are the company id), 0x00D7 = 215 → 21.5 °C,
        // 0x01E3 = 483 → 48.3 %, battery 64 %, 7 bytes.
        #expect(
            manufacturerReadings(0x2449, "01020304 d700 e301 40 00000000000000", name: "ITH-11-B").first?.jsonString()
                == #"{"temperature":21.5,"humidity":48.3,"battery":64,"model":"ITH-11-B"}"#)
    }

    @Test func bbqProbesWithOneUnplugged() {
        // iBBQ-4 (IBT-4XS): 10 header bytes, probes 0xFFFF (unplugged), 25.0, −1.5, 300.0 °C.
        #expect(
            manufacturerReadings(0x0000, "0000000000000000 ffff fa00 f1ff b80b", name: "iBBQ").first?.jsonString()
                == #"{"temperature_probe_1":null,"temperature_probe_2":25,"temperature_probe_3":-1.5,"temperature_probe_4":300,"model":"iBBQ-4"}"#
        )
        #expect(
            manufacturerReadings(0x0000, "0000000000000000 fa00 fa00", name: "xBBQ").first?["model"]
                == .string("iBBQ-2"))
    }

    @Test func corruptHumidityOrBatteryIsAnError() {
        let humidity = manufacturerReadings(0x0929, "ffff 000000 55 08", name: "sps").first
        #expect(humidity?.error?.code == .invalidValue && humidity?.error?.field == "humidity")
        let battery = manufacturerReadings(0x0929, "2e16 000000 ff 08", name: "sps").first
        #expect(battery?.error?.code == .invalidValue && battery?.error?.field == "battery")
    }

    @Test func nameAndLengthMustAgree() {
        #expect(manufacturerReadings(0x0929, "2e16 000000 55 08", name: nil).isEmpty)
        #expect(manufacturerReadings(0x0929, "2e16 000000 55", name: "sps").isEmpty)
        #expect(manufacturerReadings(0x0929, "2e16 000000 55 08", name: "ith-11-b").isEmpty)
        #expect(manufacturerReadings(0x0000, "0000000000000000 fa00 fa00 00", name: "iBBQ").isEmpty)
    }
}
