import Bluetooth
import ByteLayouts
import Decoders
import Foundation
import JSON
import Testing

/// Layout fields present only when an earlier field says so (`present_if`), checked against the
/// built-in Heart Rate Measurement decoder on every flag combination it shares with the layout.
@Suite struct LayoutConditionTests {
    /// Heart Rate Measurement (0x2A37) written as a user would: the flags, an 8- or 16-bit heart
    /// rate by bit 0, the energy expended by bit 3.
    static let heartRate: ByteLayout = {
        let json = #"""
            {"name": "hr", "fields": [
              {"type": "bits", "length": 1, "bits": [
                {"name": "wide", "shift": 0}, {"name": "contact_bits", "shift": 1, "width": 2},
                {"name": "energy_present", "shift": 3}]},
              {"name": "heart_rate", "type": "uint8", "unit": "bpm", "present_if": {"field": "wide", "equals": false}},
              {"name": "heart_rate", "type": "uint16_le", "unit": "bpm", "present_if": {"field": "wide", "equals": true}},
              {"name": "energy_expended", "type": "uint16_le", "unit": "kJ", "present_if": {"field": "energy_present", "mask": 1}}]}
            """#
        return try! JSONDecoder().decode(ByteLayout.self, from: Data(json.utf8))
    }()

    @Test func aFlagDecidesWhichFieldsFollow() throws {
        try Self.heartRate.validate()
        #expect(
            Self.heartRate.reading(bytes("0048")).jsonString()
                == #"{"wide":false,"contact_bits":0,"energy_present":false,"heart_rate":72}"#)
        #expect(
            Self.heartRate.reading(bytes("09 4801 0a00")).jsonString()
                == #"{"wide":true,"contact_bits":0,"energy_present":true,"heart_rate":328,"energy_expended":10}"#)
        // Bytes for a field whose flag is clear are trailing bytes, not a reading.
        #expect(Self.heartRate.reading(bytes("00 48 0a00")).error?.code == .trailingBytes)
        #expect(Self.heartRate.reading(bytes("08 48")).error?.field == "energy_expended")
    }

    @Test func agreesWithTheBuiltInHeartRateDecoder() throws {
        let builtIn = try #require(DecoderRegistry.standard.decoder(named: "heart_rate_measurement"))
        for flags: UInt8 in [0x00, 0x01, 0x08, 0x09] {
            for _ in 0..<50 {
                let rate =
                    flags & 1 == 0
                    ? [UInt8.random(in: 0...255)] : [UInt8.random(in: 0...255), UInt8.random(in: 0...255)]
                let energy = flags & 8 == 0 ? [] : [UInt8.random(in: 0...255), UInt8.random(in: 0...255)]
                let value = [flags] + rate + energy
                let layout = Self.heartRate.reading(value)
                let reference = builtIn.reading(value)
                #expect(layout["heart_rate"] == reference["heart_rate"], "\(Hex.string(value))")
                #expect(layout["energy_expended"] == reference["energy_expended"], "\(Hex.string(value))")
            }
        }
    }

    @Test func encodingWritesOnlyThePresentFields() throws {
        let narrow = try Self.heartRate.encode([
            "wide": .bool(false), "contact_bits": .int(0), "energy_present": .bool(false), "heart_rate": .int(72),
            "energy_expended": .int(5),
        ])
        #expect(Hex.string(narrow) == "0048")
        let wide = try Self.heartRate.encode([
            "wide": .bool(true), "contact_bits": .int(0), "energy_present": .bool(true), "heart_rate": .int(328),
            "energy_expended": .int(10),
        ])
        #expect(Hex.string(wide) == "0948010a00")
        #expect(try Self.heartRate.decode(wide) == Self.heartRate.decode(bytes("0948010a00")))
    }

    @Test func aConditionOnAConditionalFieldThatIsAbsentIsFalse() throws {
        let layout = ByteLayout(fields: [
            .init(name: "kind", type: .uint8),
            .init(name: "extra_flags", type: .uint8, presentIf: .init(field: "kind", equals: 2)),
            .init(name: "extra", type: .int16LE, scale: 0.1, presentIf: .init(field: "extra_flags", mask: 0x80)),
        ])
        try layout.validate()
        #expect(layout.reading(bytes("01")).jsonString() == #"{"kind":1}"#)
        #expect(layout.reading(bytes("0200")).jsonString() == #"{"kind":2,"extra_flags":0}"#)
        #expect(layout.reading(bytes("0281f6ff")).jsonString() == #"{"kind":2,"extra_flags":129,"extra":-1}"#)
    }

    @Test func badConditionsNameTheirPath() {
        let cases: [(ByteLayout, String)] = [
            (
                ByteLayout(fields: [.init(name: "a", type: .uint8, presentIf: .init(field: "a", mask: 1))]),
                "fields[0].present_if.field"
            ),
            (
                ByteLayout(fields: [
                    .init(name: "t", type: .utf8, length: 2),
                    .init(name: "a", type: .uint8, presentIf: .init(field: "t", equals: 1)),
                ]), "fields[1].present_if.field"
            ),
            (
                ByteLayout(fields: [
                    .init(name: "f", type: .uint8), .init(name: "a", type: .uint8, presentIf: .init(field: "f")),
                ]),
                "fields[1].present_if"
            ),
            (
                ByteLayout(fields: [
                    .init(name: "f", type: .uint8),
                    .init(name: "a", type: .uint8, presentIf: .init(field: "f", equals: 1)),
                    .init(name: "a", type: .uint8, presentIf: .init(field: "f", equals: 1)),
                ]), "fields[2]"
            ),
        ]
        for (layout, path) in cases {
            #expect(throws: ByteLayoutError.self, "\(path)") { try layout.validate() }
            let error = decoderError { () throws(DecoderError) in _ = try layout.decode([]) }
            #expect(error?.field == path)
        }
    }
}
