import Bluetooth
import Decoders
import Testing

@Suite struct EncoderAndRateTests {
    @Test(arguments: [
        (DecodedValue.string("high"), AlertLevel.high), (.string("Mild"), .mild), (.string("none"), .none),
        (.string("no_alert"), .none), (.int(2), .high), (.int(0), .none),
    ])
    func alertLevelAcceptsNamesAndNumbers(value: DecodedValue, level: AlertLevel) throws {
        #expect(try AlertLevel(value: value) == level)
        #expect(try AlertLevel(value: value).encoded == [level.rawValue])
        #expect(
            try AlertLevelCharacteristic().decode(level.encoded) == [
                DecodedField(name: "alert_level", value: .string(level.name))
            ])
    }

    @Test(arguments: [DecodedValue.string("loud"), .int(3), .int(-1), .bool(true)])
    func alertLevelRejectsOtherValues(value: DecodedValue) {
        let error = decoderError { () throws(DecoderError) in _ = try AlertLevel(value: value) }
        #expect(error?.code == .invalidInput)
        #expect(error?.field == "alert_level")
    }

    @Test func cyclingRatesFromConsecutiveMeasurements() {
        var calculator = CyclingRateCalculator(wheelCircumference: 2.0)
        typealias R = CSCMeasurement.Revolutions
        #expect(
            calculator.update(CSCMeasurement(wheel: R(count: 100, eventTime: 0), crank: R(count: 10, eventTime: 0)))
                == .init())
        // 2 wheel revolutions and 1 crank revolution in 1024/1024 s.
        let rates = calculator.update(
            CSCMeasurement(wheel: R(count: 102, eventTime: 1024), crank: R(count: 11, eventTime: 1024)))
        #expect(rates.wheelRPM == 120)
        #expect(rates.speed == 4)
        #expect(rates.cadence == 60)
        #expect(names(rates.fields) == ["speed", "wheel_rpm", "cadence"])
    }

    @Test func cyclingRatesSurviveCounterAndTimerWrapAround() {
        var calculator = CyclingRateCalculator(wheelCircumference: 2.0)
        typealias R = CSCMeasurement.Revolutions
        _ = calculator.update(
            CSCMeasurement(wheel: R(count: UInt32.max, eventTime: 65_024), crank: R(count: 65_535, eventTime: 65_024)))
        let rates = calculator.update(
            CSCMeasurement(wheel: R(count: 1, eventTime: 512), crank: R(count: 0, eventTime: 512)))
        // 2 wheel revolutions and 1 crank revolution across the wrap, in 1024 ticks.
        #expect(rates.wheelRPM == 120)
        #expect(rates.cadence == 60)
    }

    @Test func cyclingRatesFallToZeroWhenTheRiderStops() {
        var calculator = CyclingRateCalculator(wheelCircumference: 2.0, staleAfter: 2)
        typealias R = CSCMeasurement.Revolutions
        _ = calculator.update(CSCMeasurement(crank: R(count: 10, eventTime: 0)))
        #expect(calculator.update(CSCMeasurement(crank: R(count: 11, eventTime: 1024))).cadence == 60)
        #expect(calculator.update(CSCMeasurement(crank: R(count: 11, eventTime: 1024))).cadence == 60)
        #expect(calculator.update(CSCMeasurement(crank: R(count: 11, eventTime: 1024))).cadence == 60)
        #expect(calculator.update(CSCMeasurement(crank: R(count: 11, eventTime: 1024))).cadence == 0)
    }

    @Test func cscMeasurementParsesFromBytes() throws {
        let measurement = try CSCMeasurement(bytes: bytes("03 00010000 0004 1000 0002"))
        #expect(measurement.wheel == .init(count: 256, eventTime: 1024))
        #expect(measurement.crank == .init(count: 16, eventTime: 512))
    }
}
