import Decoders
import Testing

@Suite struct DecodedValueTests {
    @Test func fieldsCompareByNameValueAndUnit() {
        let a = DecodedField(name: "heart_rate", value: .int(72), unit: "bpm")
        #expect(a == DecodedField(name: "heart_rate", value: .int(72), unit: "bpm"))
        #expect(a != DecodedField(name: "heart_rate", value: .int(72)))
    }
}
