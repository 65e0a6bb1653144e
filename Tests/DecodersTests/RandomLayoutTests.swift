import Bluetooth
import ByteLayouts
import Decoders
import Testing

/// Random user layouts: validation never crashes; valid layouts decode random bytes to a typed
/// error or fields; and what decodes encodes back to the same bytes (for exact types) or at
/// least to a value that decodes again.
@Suite struct RandomLayoutTests {
    static let exactTypes: [ByteLayout.FieldType] = [
        .uint8, .int8, .uint16LE, .uint16BE, .int16LE, .int16BE, .uint24LE, .uint24BE, .int24LE, .int24BE, .uint32LE,
        .uint32BE, .int32LE, .int32BE, .bytes, .utf8, .bits, .skip,
    ]
    static let scales: [Double?] = [nil, 1, 0.1, 0.01, 0.5, 2, 0.005]
    static let offsets: [Double?] = [nil, 0, -40, 500]

    private func randomLayout(_ generator: inout SeededRandomNumberGenerator, exact: Bool) -> ByteLayout {
        let types = exact ? Self.exactTypes : ByteLayout.FieldType.allCases
        var fields: [ByteLayout.Field] = []
        for index in 0..<Int(generator.next() % 6 + 1) {
            let type = types.randomElement(using: &generator)!
            var field = ByteLayout.Field(name: "f\(index)", type: type)
            switch type {
            case .bytes, .utf8:
                // Sometimes open-ended (valid only when last), sometimes fixed.
                field.length = generator.next() % 3 == 0 ? nil : Int(generator.next() % 5)
            case .skip:
                field.name = nil
                field.length = Int(generator.next() % 3) + (generator.next() % 8 == 0 ? -1 : 1)
            case .bits:
                field.name = nil
                let length = Int(generator.next() % 4) + 1
                field.length = length
                var shift = 0
                var bits: [ByteLayout.BitField] = []
                while shift < length * 8, bits.count < 4 {
                    let width = Int(generator.next() % 5) + 1
                    bits.append(.init(name: "f\(index)b\(bits.count)", shift: shift, width: width))
                    shift += width + Int(generator.next() % 3)
                }
                field.bits = bits
            default:
                field.scale = Self.scales.randomElement(using: &generator)!
                field.offset = Self.offsets.randomElement(using: &generator)!
            }
            if generator.next() % 50 == 0 { field.name = "f0" }  // a duplicate name now and then
            fields.append(field)
        }
        return ByteLayout(name: "random", fields: fields)
    }

    static func width(_ type: ByteLayout.FieldType) -> Int {
        switch type {
        case .uint8, .int8: return 1
        case .uint16LE, .uint16BE, .int16LE, .int16BE, .sfloat: return 2
        case .uint24LE, .uint24BE, .int24LE, .int24BE: return 3
        case .uint32LE, .uint32BE, .int32LE, .int32BE, .float32LE, .float32BE: return 4
        case .bytes, .utf8, .bits, .skip: return 0
        }
    }

    @Test func randomLayoutsAndValuesRoundTrip() async {
        var generator = SeededRandomNumberGenerator(seed: 0x5EED)
        var roundTrips = 0
        for iteration in 0..<20_000 {
            // A CPU-bound loop must not hold a cooperative thread for seconds: other suites'
            // awaits (child processes, brokers, time-outs) run on the same two threads.
            if iteration % 1024 == 0 { await Task.yield() }
            let exact = iteration % 2 == 0
            let layout = randomLayout(&generator, exact: exact)
            // Random layouts are often inconsistent; validation (typed) rejects those.
            guard (try? layout.validate()) != nil else { continue }
            // Mostly the layout's own length (so decoding reaches the end), sometimes any length.
            let fixed = layout.fields.reduce(0) { $0 + ($1.length ?? Self.width($1.type)) }
            let length = generator.next() % 4 == 0 ? Int(generator.next() % 24) : fixed + Int(generator.next() % 2)
            // ASCII-only bytes on some iterations so `utf8` fields decode too.
            let mask: UInt64 = iteration % 4 < 2 ? 0x7F : 0xFF
            let input = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next() & mask) }
            let reading = layout.reading(input)
            guard reading.isSuccess else { continue }
            var values: [String: DecodedValue] = [:]
            for field in reading.fields { values[field.name] = field.value }
            let encoded: [UInt8]
            do {
                encoded = try layout.encode(values)
            } catch {
                // Only non-exact types may fail to re-encode (NaN floats, SFLOAT specials → null).
                if exact { Issue.record("exact layout failed to re-encode \(Hex.string(input)): \(error) \(layout)") }
                continue
            }
            if exact {
                // Skipped bytes encode as zeros, so compare the decoded fields, not the bytes.
                let again = layout.reading(encoded)
                if again.fields != reading.fields {
                    Issue.record("round trip changed \(Hex.string(input)) → \(Hex.string(encoded)) for \(layout)")
                    return
                }
                roundTrips += 1
            } else if !layout.reading(encoded).isSuccess {
                Issue.record("re-encoded value does not decode: \(Hex.string(encoded)) for \(layout)")
                return
            }
        }
        #expect(roundTrips > 2_000, "the generator must reach the round-trip path often")
    }
}
