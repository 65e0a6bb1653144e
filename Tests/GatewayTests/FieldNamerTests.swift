import Decoders
import Gateway
import Testing

@Suite struct FieldNamerTests {
    @Test func theFirstConfiguredCharacteristicKeepsThePlainName() {
        var namer = FieldNamer()
        let temperature = [DecodedField(name: "temperature", value: .double(36.8))]
        // The later subscription (rank 1) reports first: it owns the name until rank 0 appears.
        #expect(namer.name(temperature, device: "t", rank: 1, suffix: "intermediate").map(\.name) == ["temperature"])
        #expect(namer.name(temperature, device: "t", rank: 0, suffix: "measurement").map(\.name) == ["temperature"])
        #expect(
            namer.name(temperature, device: "t", rank: 1, suffix: "intermediate").map(\.name) == [
                "temperature_intermediate"
            ])
        #expect(namer.name(temperature, device: "t", rank: 2, suffix: "ess").map(\.name) == ["temperature_ess"])
        // Other devices and other fields are independent.
        #expect(namer.name(temperature, device: "u", rank: 2, suffix: "ess").map(\.name) == ["temperature"])
        #expect(
            namer.name([DecodedField(name: "humidity", value: .int(40))], device: "t", rank: 3, suffix: "h").map(\.name)
                == ["humidity"])
    }
}
