import Bluetooth
import Testing

@testable import BlueZSimulator

@Suite struct ValueGeneratorTests {
    /// Parses a Heart Rate Measurement the way the spec (and the gateway's decoder) reads it.
    static func parseHeartRate(_ bytes: [UInt8]) -> (flags: UInt8, bpm: Int, energy: Int?, rr: [Double])? {
        guard bytes.count >= 2 else { return nil }
        let flags = bytes[0]
        var index = 1
        let bpm: Int
        if flags & 0x01 != 0 {
            bpm = Int(bytes[1]) | Int(bytes[2]) << 8
            index = 3
        } else {
            bpm = Int(bytes[1])
            index = 2
        }
        var energy: Int?
        if flags & 0x08 != 0 {
            energy = Int(bytes[index]) | Int(bytes[index + 1]) << 8
            index += 2
        }
        var rr: [Double] = []
        if flags & 0x10 != 0 {
            while index + 1 < bytes.count {
                rr.append(Double(Int(bytes[index]) | Int(bytes[index + 1]) << 8) / 1024)
                index += 2
            }
        }
        guard index == bytes.count else { return nil }
        return (flags, bpm, energy, rr)
    }

    @Test func heartRateIsRealisticWithRRIntervalsAndContact() throws {
        var generator = ValueGenerator(spec: ScenarioGenerator(kind: .heartRate), seed: 7)
        var allRR: [Double] = []
        var rates: [Int] = []
        for second in 0..<600 {
            let value = generator.next(elapsed: .seconds(second))
            let parsed = try #require(Self.parseHeartRate(value))
            #expect(parsed.flags & 0x06 == 0x06, "sensor contact supported and detected")
            #expect(value.count <= 20, "fits a default-MTU notification")
            rates.append(parsed.bpm)
            allRR.append(contentsOf: parsed.rr)
            for rr in parsed.rr {
                // An RR interval matches the heart rate of the moment within a few percent.
                #expect(abs(rr - 60 / Double(parsed.bpm)) / (60 / Double(parsed.bpm)) < 0.12)
            }
        }
        #expect(rates.min()! >= 50 && rates.max()! <= 165)
        #expect(rates.max()! - rates.min()! > 15, "heart rate varies over ten minutes")
        // Roughly one RR interval per beat: the sum of RR covers nearly all of the 600 s.
        #expect(abs(allRR.reduce(0, +) - 599) < 5)
        // Beat-to-beat variability exists.
        #expect(Set(allRR.map { Int($0 * 1024) }).count > 50)
    }

    @Test func heartRateContactLostAndEnergy() throws {
        var spec = ScenarioGenerator(kind: .heartRate)
        spec.contact = .lost
        spec.energy = true
        var generator = ValueGenerator(spec: spec, seed: 1)
        _ = generator.next(elapsed: .zero)
        let parsed = try #require(Self.parseHeartRate(generator.next(elapsed: .seconds(60))))
        #expect(parsed.flags & 0x06 == 0x04, "contact supported, not detected")
        #expect(parsed.rr.isEmpty, "no RR intervals without contact")
        #expect(parsed.energy != nil)
        spec.contact = .unsupported
        var unsupported = ValueGenerator(spec: spec, seed: 1)
        #expect(unsupported.next(elapsed: .zero)[0] & 0x06 == 0)
    }

    @Test func healthThermometerUsesIEEE11073Float() {
        var spec = ScenarioGenerator(kind: .temperature)
        spec.format = .ieee11073
        spec.base = 36.8
        spec.drift = 0
        var generator = ValueGenerator(spec: spec, seed: 3)
        let value = generator.next(elapsed: .seconds(10))
        #expect(value.count == 5)
        #expect(value[0] == 0x00, "Celsius, no time stamp, no type")
        let raw = UInt32(value[1]) | UInt32(value[2]) << 8 | UInt32(value[3]) << 16 | UInt32(value[4]) << 24
        let exponent = Int8(bitPattern: UInt8(raw >> 24))
        let mantissa = Int32(bitPattern: (raw & 0x00FF_FFFF) << 8) >> 8
        let celsius = Double(mantissa) * pow10(Int(exponent))
        #expect(exponent == -2)
        #expect(abs(celsius - 36.8) <= 0.03)
    }

    private func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(exponent) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }

    @Test func environmentalSensingFormatsDriftAroundTheBase() {
        var temperature = ValueGenerator(spec: ScenarioGenerator(kind: .temperature), seed: 4)
        var readings: [Double] = []
        for minute in 0..<10 {
            let value = temperature.next(elapsed: .seconds(minute * 60))
            #expect(value.count == 2)
            readings.append(Double(Int16(bitPattern: UInt16(value[0]) | UInt16(value[1]) << 8)) / 100)
        }
        #expect(readings.allSatisfy { abs($0 - 21.5) <= 0.65 })
        #expect(readings.max()! - readings.min()! > 0.3, "temperature drifts")

        var humidity = ValueGenerator(spec: ScenarioGenerator(kind: .humidity), seed: 4)
        let h = humidity.next(elapsed: .seconds(5))
        #expect(h.count == 2)
        #expect(abs(Double(UInt16(h[0]) | UInt16(h[1]) << 8) / 100 - 45) <= 4.2)

        var pressure = ValueGenerator(spec: ScenarioGenerator(kind: .pressure), seed: 4)
        let p = pressure.next(elapsed: .seconds(5))
        #expect(p.count == 4)
        let pascal = Double(UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24) / 10
        #expect(abs(pascal - 101_325) <= 160)
    }

    @Test func batteryDrains() {
        var spec = ScenarioGenerator(kind: .battery)
        spec.start = 90
        spec.drainPerHour = 10
        var generator = ValueGenerator(spec: spec, seed: 0)
        #expect(generator.next(elapsed: .zero) == [90])
        #expect(generator.next(elapsed: .seconds(3600)) == [80])
        #expect(generator.next(elapsed: .seconds(36000)) == [0])
    }

    @Test func bthomeV2ServiceDataHasAnIncrementingPacketID() {
        var generator = ValueGenerator(spec: ScenarioGenerator(kind: .bthome), seed: 5)
        let first = generator.next(elapsed: .seconds(1))
        let second = generator.next(elapsed: .seconds(2))
        #expect(first.count == 11)
        #expect(first[0] == 0x40, "BTHome v2, unencrypted")
        #expect(first[1] == 0x00 && first[3] == 0x01 && first[5] == 0x02 && first[8] == 0x03, "object ids ascending")
        #expect(second[2] == first[2] &+ 1)
        let temperature = Double(Int16(bitPattern: UInt16(first[6]) | UInt16(first[7]) << 8)) / 100
        #expect(abs(temperature - 21.5) < 1)
        #expect(first[4] == 100)
    }

    @Test func iBeaconManufacturerDataLayout() {
        var spec = ScenarioGenerator(kind: .ibeacon)
        spec.major = 0x0102
        spec.minor = 0x0304
        spec.measuredPower = -59
        var generator = ValueGenerator(spec: spec, seed: 0)
        let value = generator.next(elapsed: .zero)
        #expect(value.count == 23)
        #expect(Array(value[0..<2]) == [0x02, 0x15])
        #expect(Array(value[2..<6]) == [0xE2, 0xC5, 0x6D, 0xB5], "proximity UUID big-endian")
        #expect(Array(value[18..<22]) == [0x01, 0x02, 0x03, 0x04])
        #expect(Int8(bitPattern: value[22]) == -59)
    }

    @Test func loadValueRoundTrips() {
        let value = LoadValue(device: 7, sequence: 123_456, timestampNanoseconds: 1_700_000_000_123_456_789)
        #expect(value.bytes.count == 20)
        #expect(LoadValue(bytes: value.bytes) == value)
        #expect(LoadValue(bytes: [1, 2, 3]) == nil)
    }
}
