import Bluetooth
import Decoders
import Testing

/// Xiaomi's scales (service data 0x181D and 0x181B): vectors built from the layout in
/// docs/decoders.md ("Xiaomi scales"); the differential suite checks the same against xiaomi-ble.
@Suite struct MiScaleTests {
    static func decode(_ uuid: UInt16, _ hex: String) -> [DecodedReading] {
        DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(uuid): bytes(hex)], manufacturerData: [:])
    }

    @Test func smartScaleInKilograms() {
        // 0x22: stable; 0x36B0 = 14,000 → 70 kg; 2025-01-30 12:46:10.
        let readings = Self.decode(0x181D, "22 b036 e907 01 1e 0c 2e 0a")
        #expect(readings.map(\.decoder) == ["miscale_v1"])
        #expect(
            readings.first?.jsonString()
                == #"{"weight":70,"weight_unit":"kg","stabilized":true,"weight_removed":false,"#
                + #""timestamp":"2025-01-30T12:46:10","model":"XMTZC01HM/XMTZC04HM"}"#)
    }

    @Test func poundsAndJinAreConvertedToKilograms() {
        // 0x01: pounds, not stable: 14,040 → 140.40 lb = 63.684… kg (to the gram).
        let pounds = Self.decode(0x181D, "01 d836 e907 01 1e 0c 2e 0a").first
        #expect(pounds?["weight"] == .double(63.684))
        #expect(pounds?["weight_unit"] == .string("lb"))
        #expect(pounds?["stabilized"] == .bool(false))
        // 0x30: jin, stable: 14,032 → 140.32 jin = 70.16 kg.
        let jin = Self.decode(0x181D, "30 d036 e907 01 1e 0c 2e 0a").first
        #expect(jin?["weight"] == .double(70.16))
        #expect(jin?["weight_unit"] == .string("jin"))
    }

    @Test func bodyCompositionScaleWithImpedance() {
        // Byte 1 0x22: stable, impedance measured; 500 Ω; 70 kg.
        #expect(
            Self.decode(0x181B, "02 22 e907 01 1e 0c 2e 0a f401 b036").first?.jsonString()
                == #"{"weight":70,"weight_unit":"kg","stabilized":true,"weight_removed":false,"impedance":500,"#
                + #""timestamp":"2025-01-30T12:46:10","model":"XMTZC02HM/XMTZC05HM"}"#)
    }

    @Test func theImpedanceOnlyWithAFinalWeight() {
        // Removed (bit 7), not stable (bit 5 clear), or nobody on the scale: no impedance.
        for (state, weight) in [("a2", "b036"), ("02", "b036"), ("22", "0000")] {
            let reading = Self.decode(0x181B, "00 \(state) e907 01 1e 0c 2e 0a f401 \(weight)").first
            #expect(reading?.isSuccess == true)
            #expect(reading?["impedance"] == nil, "\(state) \(weight)")
            #expect(reading?["stabilized"] == .bool(false), "\(state) \(weight)")
        }
        #expect(Self.decode(0x181B, "00 a2 e907 01 1e 0c 2e 0a f401 b036").first?["weight_removed"] == .bool(true))
    }

    @Test func anUnsetClockIsNull() {
        #expect(Self.decode(0x181D, "22 b036 0000 00 00 00 00 00").first?["timestamp"] == .null)
    }

    @Test func otherLengthsAreNotTakenAndAForcedOneIsATypedError() {
        #expect(Self.decode(0x181D, "22 b036 e907 01 1e 0c 2e").isEmpty)
        #expect(Self.decode(0x181B, "02 22 e907 01 1e 0c 2e 0a f401 b0").isEmpty)
        let forced = DecoderRegistry.standard.decodeAdvertisement(
            serviceData: [BluetoothUUID(UInt16(0x181D)): bytes("22 b036 e907")], manufacturerData: [:],
            decoder: "miscale_v1")
        #expect(forced.first?.error?.code == .truncated)
        // An impossible date names the part, as the SIG's Date Time does.
        #expect(Self.decode(0x181D, "22 b036 e907 02 1e 0c 2e 0a").first?.error?.field == "timestamp.day")
    }
}
