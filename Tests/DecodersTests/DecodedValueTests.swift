import Decoders
import Testing

@Suite struct DecodedValueTests {
    @Test func rendersCompactOrderedJSON() {
        let value = DecodedValue.object([
            DecodedField(name: "z", value: .int(1)),
            DecodedField(name: "a", value: .array([.double(0.5), .bool(true), .null])),
            DecodedField(name: "s", value: .string("q\"\\\n\u{01}°")),
        ])
        #expect(value.jsonString == #"{"z":1,"a":[0.5,true,null],"s":"q\"\\\n\u0001°"}"#)
    }

    @Test func integralDoublesHaveNoFractionAndNonFiniteIsNull() {
        #expect(DecodedValue.double(36).jsonString == "36")
        #expect(DecodedValue.double(-0.25).jsonString == "-0.25")
        #expect(DecodedValue.double(.nan).jsonString == "null")
        #expect(DecodedValue.double(.infinity).jsonString == "null")
    }

    @Test func aFailedReadingKeepsTheRawBytesAndTheError() {
        let reading = HeartRateMeasurement().reading([0x01, 0x48])
        #expect(!reading.isSuccess)
        #expect(reading.raw == [0x01, 0x48])
        #expect(
            reading.jsonString()
                == #"{"raw_hex":"0148","error":{"code":"truncated","field":"heart_rate","offset":1,"message":"needs 2 byte(s), 1 left"}}"#
        )
    }

    @Test func fieldsCarryUnitAndHomeAssistantKind() throws {
        let fields = try HeartRateMeasurement().decode([0x06, 0x48])
        #expect(fields[0].unit == "bpm")
        #expect(fields[0].kind == .measurement)
        #expect(fields[1].kind.component == .binarySensor)
        #expect(try BatteryLevel().decode([88])[0].kind.deviceClass == "battery")
    }
}
