import Bluetooth
import ByteLayouts
import Decoders
import Foundation
import Testing

/// The layout language's packed decimal parts (`divisor`, `modulus`, `sign_bit` on bit fields) and
/// `"manufacturer_id": "any"` payloads (company-id bytes first): the Govee and ThermoPro layouts of
/// docs/configuration.md decode what the built-in `govee` and `thermopro` decoders decode.
@Suite struct LayoutPackedTests {
    static let govee = #"""
        {"name": "govee_packed", "fields": [
          {"type": "skip", "length": 1},
          {"type": "bits", "length": 3, "big_endian": true, "bits": [
            {"name": "temperature", "shift": 0, "width": 23, "divisor": 1000, "sign_bit": 23, "scale": 0.1,
             "unit": "°C", "device_class": "temperature"},
            {"name": "humidity", "shift": 0, "width": 23, "modulus": 1000, "scale": 0.1,
             "unit": "%", "device_class": "humidity"}]},
          {"type": "bits", "length": 1, "bits": [
            {"name": "battery", "shift": 0, "width": 7, "unit": "%", "device_class": "battery"},
            {"name": "sensor_error", "shift": 7, "device_class": "problem"}]},
          {"type": "skip", "length": 1}]}
        """#

    static let thermopro = #"""
        {"name": "thermopro_tp357", "fields": [
          {"type": "skip", "length": 1},
          {"name": "temperature", "type": "int16_le", "scale": 0.1, "unit": "°C", "device_class": "temperature"},
          {"name": "humidity", "type": "uint8", "unit": "%", "device_class": "humidity"},
          {"type": "bits", "length": 1, "bits": [{"name": "battery_level", "shift": 0, "width": 2}]},
          {"name": "rest", "type": "bytes"}]}
        """#

    static func layout(_ json: String) throws -> ByteLayout {
        let layout = try JSONDecoder().decode(ByteLayout.self, from: Data(json.utf8))
        try layout.validate()
        return layout
    }

    @Test func documentedGoveeExample() throws {
        let reading = try Self.layout(Self.govee).reading(bytes("00 80d0d0 64 00"))
        #expect(
            reading.jsonString() == #"{"temperature":-5.3,"humidity":45.6,"battery":100,"sensor_error":false}"#)
        #expect(reading.fields.first?.kind == FieldKind.sensor("temperature"))
    }

    @Test func goveeLayoutAgreesWithTheBuiltInDecoder() async throws {
        let layout = try Self.layout(Self.govee)
        var generator = SeededRandomNumberGenerator(seed: 0x5075)
        for iteration in 0..<5_000 {
            // A CPU-bound loop must not hold a cooperative thread for seconds (docs/testing.md).
            if iteration % 256 == 0 { await Task.yield() }
            let tenths = Int(generator.next() % 1401) - 400
            let humidity = Int(generator.next() % 1000)
            let battery = UInt8(generator.next() % 101)
            var packed = UInt32(abs(tenths) * 1000 + humidity)
            if tenths < 0 { packed |= 0x80_0000 }
            let frame: [UInt8] = [
                0x00, UInt8(packed >> 16), UInt8(packed >> 8 & 0xFF), UInt8(packed & 0xFF), battery, 0,
            ]
            let mine = layout.reading(frame)
            let builtIn = GoveeDecoder().reading([0x88, 0xEC] + frame)
            for name in ["temperature", "humidity", "battery", "sensor_error"] where mine[name] != builtIn[name] {
                Issue.record(
                    "\(Hex.string(frame)) \(name): layout \(String(describing: mine[name])), govee \(String(describing: builtIn[name]))"
                )
                return
            }
            // Encoding gives the frame back (the skipped bytes are zeros).
            let values = Dictionary(uniqueKeysWithValues: mine.fields.map { ($0.name, $0.value) })
            let encoded = try layout.encode(values)
            if encoded != frame {
                Issue.record("\(Hex.string(frame)) encodes back to \(Hex.string(encoded))")
                return
            }
        }
    }

    @Test func encodingRefusesWhatThePartsCannotHold() throws {
        let layout = try Self.layout(Self.govee)
        let base: [String: DecodedValue] = [
            "temperature": .double(20), "humidity": .double(50), "battery": .int(90), "sensor_error": .bool(false),
        ]
        var humidity = base
        humidity["humidity"] = .double(100)  // 1000 tenths: not below the modulus
        #expect(throws: DecoderError.self) { try layout.encode(humidity) }
        var temperature = base
        temperature["temperature"] = .double(900)  // 9000 × 1000 does not fit 23 bits
        #expect(throws: DecoderError.self) { try layout.encode(temperature) }
    }

    /// A value from a write command times a large `divisor` overflowed 64 bits and trapped
    /// (the process ended); it is refused as not fitting.
    @Test func encodingRefusesAValueWhosePartOverflows() throws {
        let layout = try Self.layout(
            #"{"name": "wide", "fields": [{"type": "bits", "length": 8, "bits": ["#
                + #"{"name": "big", "shift": 0, "width": 63, "divisor": 1000000}]}]}"#)
        #expect(throws: DecoderError.self) { try layout.encode(["big": .double(2e13)]) }
        #expect(throws: DecoderError.self) { try layout.encode(["big": .int(Int64(9e14))]) }
        // A value that fits still encodes (9,000,000 × 10⁶, little-endian) and decodes back.
        let encoded = try layout.encode(["big": .int(9_000_000)])
        #expect(encoded == bytes("00 90 cd 79 2f 08 00 00"))
        #expect(layout.reading(encoded)["big"] == .int(9_000_000))
    }

    @Test func thermoProLayoutReadsTheCompanyIDBytes() throws {
        let layout = try Self.layout(Self.thermopro)
        // As the gateway hands a "manufacturer_id": "any" layout the entry of company 0xE5C2.
        let payload = try #require(
            DecoderRegistry.payload(bytes("00 2f 2c 02"), from: .manufacturerData(0xE5C2), for: .anyManufacturerData))
        #expect(payload == bytes("c2 e5 00 2f 2c 02"))
        let mine = layout.reading(payload)
        let builtIn = ThermoProDecoder().reading(payload, context: AdvertisementContext(localName: "TP357"))
        #expect(mine["temperature"] == builtIn["temperature"])
        #expect(mine["humidity"] == builtIn["humidity"])
        #expect(mine["battery_level"] == .int(0))
    }

    @Test func partValidation() {
        func problem(_ bit: ByteLayout.BitField) -> String? {
            let layout = ByteLayout(fields: [ByteLayout.Field(name: nil, type: .bits, length: 3, bits: [bit])])
            do {
                try layout.validate()
                return nil
            } catch {
                return error.path
            }
        }
        #expect(problem(.init(name: "a", shift: 0, width: 23, divisor: 0)) == "fields[0].bits[0].divisor")
        #expect(problem(.init(name: "a", shift: 0, width: 23, modulus: 1)) == "fields[0].bits[0].modulus")
        #expect(problem(.init(name: "a", shift: 0, width: 23, signBit: 24)) == "fields[0].bits[0].sign_bit")
        #expect(problem(.init(name: "a", shift: 0, width: 23, signBit: 5)) == "fields[0].bits[0].sign_bit")
        #expect(problem(.init(name: "a", shift: 0, width: 23, scale: 0)) == "fields[0].bits[0].scale")
        #expect(problem(.init(name: "a", shift: 0, width: 23, divisor: 1000, signBit: 23)) == nil)
        // One bit with arithmetic is a number (a sensor), not a boolean.
        let layout = ByteLayout(fields: [
            ByteLayout.Field(name: nil, type: .bits, length: 1, bits: [.init(name: "half", shift: 0, scale: 0.5)])
        ])
        #expect(layout.reading([0x01])["half"] == .double(0.5))
    }
}
