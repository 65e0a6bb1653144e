import Decoders
import Gateway
import Testing

@Suite struct FieldNamerTests {
    static let temperature = [DecodedField(name: "temperature", value: .double(36.8))]

    /// The sample thermometer: Temperature Measurement, Intermediate Temperature, Environmental
    /// Sensing's Temperature, humidity, battery.
    static func thermometer() -> FieldNamer {
        FieldNamer(characteristics: [
            "t": ["temperature_measurement", "intermediate_temperature", "temperature", "humidity", "battery_level"]
        ])
    }

    static let measurement = FieldNamer.Source(
        rank: 0, characteristic: "temperature_measurement", service: "health_thermometer")
    static let intermediate = FieldNamer.Source(
        rank: 1, characteristic: "intermediate_temperature", service: "health_thermometer")
    static let environmental = FieldNamer.Source(
        rank: 2, characteristic: "temperature", service: "environmental_sensing")

    func names(_ namer: inout FieldNamer, _ source: FieldNamer.Source, device: String = "t") -> [String] {
        namer.name(Self.temperature, device: device, source: source).map(\.name)
    }

    @Test func theThermometersTemperaturesGetReadableNamesWhateverArrivesFirst() {
        // Every arrival order gives the same names from the first value on.
        let orders: [[FieldNamer.Source]] = [
            [Self.measurement, Self.intermediate, Self.environmental],
            [Self.intermediate, Self.environmental, Self.measurement],
            [Self.environmental, Self.intermediate, Self.measurement],
        ]
        for order in orders {
            var namer = Self.thermometer()
            for source in order + order {
                // The configuration's "temperature" (Environmental Sensing, the room) keeps the
                // plain name; the Health Thermometer's measurement is the body temperature.
                let expected =
                    switch source.rank {
                    case 0: "body_temperature"
                    case 1: "intermediate_temperature"
                    default: "temperature"
                    }
                #expect(names(&namer, source) == [expected], "order \(order.map(\.rank))")
            }
        }
    }

    @Test func theOwnerListedFirstKeepsThePlainName() {
        // Environmental Sensing listed before the Health Thermometer: it owns `temperature`.
        var namer = FieldNamer(characteristics: ["t": ["temperature", "temperature_measurement"]])
        let environmental = FieldNamer.Source(rank: 0, characteristic: "temperature", service: "environmental_sensing")
        let measurement = FieldNamer.Source(
            rank: 1, characteristic: "temperature_measurement", service: "health_thermometer")
        #expect(names(&namer, measurement) == ["body_temperature"])
        #expect(names(&namer, environmental) == ["temperature"])
    }

    @Test func aCharacteristicNamedLikeTheFieldOwnsItBeforeAMeasurement() {
        // Temperature Measurement listed first still yields `temperature` to "temperature";
        // without "temperature" configured, the measurement keeps it and the room is ambient.
        var namer = FieldNamer(characteristics: ["t": ["temperature_measurement", "temperature"]])
        let measurement = FieldNamer.Source(
            rank: 0, characteristic: "temperature_measurement", service: "health_thermometer")
        let environmental = FieldNamer.Source(rank: 1, characteristic: "temperature", service: "environmental_sensing")
        #expect(names(&namer, measurement) == ["body_temperature"])
        #expect(names(&namer, environmental) == ["temperature"])
        var vendor = FieldNamer(characteristics: ["t": ["temperature_measurement", "6b1e0010"]])
        let room = FieldNamer.Source(rank: 1, characteristic: "6b1e0010", service: "environmental_sensing")
        #expect(names(&vendor, room) == ["ambient_temperature"])
        #expect(names(&vendor, measurement) == ["temperature"])
        // Services that say nothing about what they measure keep their name as the prefix.
        let scale = FieldNamer.Source(rank: 2, characteristic: "6b1e0011", service: "weight_scale")
        #expect(names(&vendor, scale) == ["weight_scale_temperature"])
    }

    @Test func withoutAnOwnerTheFirstListedProducerKeepsIt() {
        // Two vendor characteristics that both decode `temperature`, neither named after it.
        var namer = FieldNamer(characteristics: ["v": ["6b1e0010", "6b1e0011"]])
        let first = FieldNamer.Source(rank: 0, characteristic: "6b1e0010")
        let second = FieldNamer.Source(rank: 1, characteristic: "6b1e0011")
        #expect(names(&namer, first, device: "v") == ["temperature"])
        #expect(names(&namer, second, device: "v") == ["temperature_6b1e0011"])
        #expect(names(&namer, first, device: "v") == ["temperature"])
    }

    @Test func fieldsWithoutACollisionAndOtherDevicesKeepTheirNames() {
        var namer = Self.thermometer()
        #expect(names(&namer, Self.intermediate, device: "other") == ["temperature"])
        let humidity = FieldNamer.Source(rank: 3, characteristic: "humidity", service: "environmental_sensing")
        #expect(
            namer.name([DecodedField(name: "humidity", value: .int(40))], device: "t", source: humidity).map(\.name)
                == ["humidity"])
        // A single intermediate-temperature subscription keeps the decoder's name.
        var single = FieldNamer(characteristics: ["s": ["intermediate_temperature"]])
        let only = FieldNamer.Source(rank: 0, characteristic: "intermediate_temperature")
        #expect(names(&single, only, device: "s") == ["temperature"])
    }
}
