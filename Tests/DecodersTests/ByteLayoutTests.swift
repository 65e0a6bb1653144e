import ByteLayouts
import Decoders
import Foundation
import JSON
import Testing

@Suite struct ByteLayoutTests {
    static let json = """
        {"name": "lamp_status", "fields": [
          {"name": "power", "type": "uint8"},
          {"name": "temperature", "type": "int16_le", "scale": 0.01, "unit": "°C", "device_class": "temperature"},
          {"name": "pressure", "type": "uint24_be", "scale": 0.1, "offset": 500, "unit": "hPa"},
          {"name": "energy", "type": "uint32_be"},
          {"name": "delta", "type": "int32_le"},
          {"name": "level", "type": "float32_le"},
          {"name": "glucose", "type": "sfloat", "unit": "mg/dL"},
          {"type": "bits", "length": 1, "bits": [
              {"name": "on", "shift": 0},
              {"name": "mode", "shift": 1, "width": 3},
              {"name": "fault", "shift": 7, "device_class": "problem"}]},
          {"type": "skip", "length": 2},
          {"name": "tag", "type": "bytes", "length": 2},
          {"name": "label", "type": "utf8"}]}
        """

    // SFLOAT 0xF4B0 is 1200 × 10^-1: the encoder writes the finest exponent, so this round-trips.
    static let value = bytes("01 2c09 000064 000003e8 feffffff 0000c03f b0f4 8b 0000 beef 4c616d70")

    static let layout: ByteLayout = {
        do {
            return try JSONDecoder().decode(ByteLayout.self, from: Data(json.utf8))
        } catch {
            fatalError("sample layout does not decode: \(error)")
        }
    }()

    @Test func decodesEveryFieldTypeToGoldenJSON() throws {
        let reading = Self.layout.reading(Self.value)
        #expect(reading.decoder == "lamp_status")
        #expect(
            reading.jsonString()
                == #"{"power":1,"temperature":23.48,"pressure":510,"energy":1000,"delta":-2,"level":1.5,"glucose":120,"on":true,"mode":5,"fault":true,"tag":"beef","label":"Lamp"}"#
        )
        #expect(reading.fields[1].unit == "°C")
        #expect(reading.fields[1].kind.deviceClass == "temperature")
        #expect(reading.fields[9].kind.component == .binarySensor)
    }

    /// The `fuzz-byte-layouts` seed on which AddressSanitizer (release build) reported a
    /// heap-use-after-free in the copy a `skip` field made and threw away; `skip` now steps over
    /// the bytes without a copy. `make sanitize` runs this under ASan.
    @Test func aSkipFieldBetweenBitsAndTrailingUTF8Decodes() throws {
        let json = #"""
            {"name": "lamp_status", "fields": [{"name": "power", "type": "uint8"},
              {"name": "temperature", "type": "int16_le", "scale": 0.01, "unit": "°C", "device_class": "temperature"},
              {"type": "bits", "length": 1, "bits": [{"name": "on", "shift": 0}, {"name": "mode", "shift": 1, "width": 3}]},
              {"type": "skip", "length": 2}, {"name": "label", "type": "utf8"}]}
            """#
        let layout = try JSONDecoder().decode(ByteLayout.self, from: Data(json.utf8))
        let reading = layout.reading(bytes("01 0203 04 0506 0708"))
        #expect(reading.error == nil)
        #expect(reading["power"] == .int(1))
        #expect(reading["on"] == .bool(false))
        #expect(reading["mode"] == .int(2))
        #expect(reading["label"] == .string("\u{07}\u{08}"))
        #expect(layout.reading(bytes("01 0203 04 05")).error?.code == .truncated)
    }

    @Test func encodingIsTheInverseOfDecoding() throws {
        let fields = try Self.layout.decode(Self.value)
        var values: [String: DecodedValue] = [:]
        for field in fields { values[field.name] = field.value }
        #expect(try Self.layout.encode(values) == Self.value)
    }

    @Test func encodingChecksTypesAndRanges() throws {
        let layout = ByteLayout(
            name: "cmd",
            fields: [
                .init(name: "level", type: .uint8, scale: 0.5),
                .init(name: "name", type: .utf8, length: 4),
            ])
        #expect(try layout.encode(["level": .double(50), "name": .string("ab")]) == [100, 0x61, 0x62, 0, 0])
        let tooBig = decoderError { () throws(DecoderError) in
            _ = try layout.encode(["level": .int(200), "name": .string("")])
        }
        #expect(tooBig?.code == .invalidInput)
        #expect(tooBig?.field == "level")
        let missing = decoderError { () throws(DecoderError) in _ = try layout.encode(["name": .string("")]) }
        #expect(missing?.field == "level")
        let wrongType = decoderError { () throws(DecoderError) in
            _ = try layout.encode(["level": .string("x"), "name": .string("")])
        }
        #expect(wrongType?.code == .invalidInput)
        let tooLong = decoderError { () throws(DecoderError) in
            _ = try layout.encode(["level": .int(1), "name": .string("abcde")])
        }
        #expect(tooLong?.field == "name")
    }

    @Test func sfloatEncodingPicksTheFinestExponent() throws {
        let layout = ByteLayout(fields: [.init(name: "v", type: .sfloat)])
        for number in [0.0, 36.5, -0.1, 120, 2045, 98.6, 1e-7, 10_000] {
            let encoded = try layout.encode(["v": .double(number)])
            let decoded = try layout.decode(encoded)[0].value.doubleValue ?? .nan
            #expect(abs(decoded - number) <= abs(number) * 1e-3, "\(number)")
        }
    }

    @Test func truncatedValuesNameTheField() {
        let reading = Self.layout.reading(Array(Self.value.prefix(4)))
        #expect(reading.error?.code == .truncated)
        #expect(reading.error?.field == "pressure")
    }

    @Test func unknownKeysAndTypesAreRejectedWithTheirPath() {
        let typo = #"{"fields": [{"name": "a", "type": "uint8", "scael": 2}]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteLayout.self, from: Data(typo.utf8)) }
        do {
            _ = try JSONDecoder().decode(ByteLayout.self, from: Data(typo.utf8))
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue).suffix(1) == ["scael"])
            #expect((context.underlyingError as? JSONUnknownKey)?.key == "scael")
            #expect(context.debugDescription.contains(#"unknown key "scael" (did you mean "scale"?)"#))
        } catch {
            Issue.record("unexpected error \(error)")
        }
        let badType = #"{"fields": [{"name": "a", "type": "uint12"}]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ByteLayout.self, from: Data(badType.utf8)) }
    }

    @Test func inconsistentLayoutsFailValidation() {
        let cases: [(ByteLayout, String)] = [
            (ByteLayout(fields: [.init(name: "a", type: .uint8), .init(name: "a", type: .uint8)]), "fields[1]"),
            (ByteLayout(fields: [.init(name: nil, type: .uint8)]), "fields[0]"),
            (ByteLayout(fields: [.init(name: "a", type: .bytes), .init(name: "b", type: .uint8)]), "fields[0].length"),
            (ByteLayout(fields: [.init(name: nil, type: .skip)]), "fields[0].length"),
            (
                ByteLayout(fields: [
                    .init(name: nil, type: .bits, length: 1, bits: [.init(name: "x", shift: 7, width: 2)])
                ]), "fields[0].bits[0]"
            ),
            (ByteLayout(fields: [.init(name: "a", type: .uint8, scale: 0)]), "fields[0].scale"),
        ]
        for (layout, path) in cases {
            #expect(throws: ByteLayoutError.self, "\(path)") { try layout.validate() }
            let error = decoderError { () throws(DecoderError) in _ = try layout.decode([]) }
            #expect(error?.code == .invalidLayout, "\(path)")
            #expect(error?.field == path, "decoding reports the layout's own error")
        }
    }

    @Test func layoutsRoundTripThroughJSON() throws {
        let data = try JSONEncoder().encode(Self.layout)
        #expect(try JSONDecoder().decode(ByteLayout.self, from: data) == Self.layout)
    }

    @Test func aRegisteredLayoutIsFoundByNameAndRawIsTheFallback() {
        var registry = DecoderRegistry.standard
        registry.register(Self.layout)
        #expect(registry.decode(Self.value, uuid: nil, decoder: "lamp_status").isSuccess)
        #expect(registry.decode([0xAB], uuid: nil).jsonString() == #"{"raw_hex":"ab"}"#)
        #expect(registry.decode([0x01, 0x02], uuid: nil, decoder: "no_such").error?.code == .unknownDecoder)
    }
}
