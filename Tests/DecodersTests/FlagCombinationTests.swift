import Decoders
import Testing

/// Every combination of every flag bit of each flagged characteristic: the value is built from
/// the flags, decoded, and the fields present must be exactly the ones the flags announce.
/// Each value is also decoded one byte short (a typed `truncated` error, never a crash) and one
/// byte long (`trailing_bytes`, or `truncated` inside an RR-interval list).
@Suite struct FlagCombinationTests {
    static let timestamp: [UInt8] = bytes("EA070B1E010203")

    private func checkLengthErrors(_ decoder: some ValueDecoder, _ value: [UInt8], flags: Int) {
        let short = decoder.reading(Array(value.dropLast()))
        #expect(short.error?.code == .truncated, "flags \(flags): one byte short")
        let long = decoder.reading(value + [0x00])
        #expect(
            long.error?.code == .trailingBytes || long.error?.code == .truncated, "flags \(flags): one byte long")
    }

    @Test func heartRateMeasurement() throws {
        let decoder = HeartRateMeasurement()
        for flags in 0..<32 {
            var value: [UInt8] = [UInt8(flags)]
            var expected = ["heart_rate"]
            value += flags & 0x01 != 0 ? [0x48, 0x00] : [0x48]
            if flags & 0x04 != 0 { expected.append("sensor_contact") }
            if flags & 0x08 != 0 {
                value += [0x10, 0x00]
                expected.append("energy_expended")
            }
            if flags & 0x10 != 0 {
                value += [0x40, 0x03, 0x50, 0x03]
                expected.append("rr_intervals")
            }
            let fields = try decoder.decode(value)
            #expect(names(fields) == expected, "flags \(flags)")
            #expect(fields[0].value == .int(72))
            if flags & 0x04 != 0 {
                #expect(fields[1].value == .bool(flags & 0x02 != 0))
            }
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test(arguments: [true, false])
    func temperatureMeasurementAndIntermediateTemperature(intermediate: Bool) throws {
        let decoder: any ValueDecoder = intermediate ? IntermediateTemperature() : TemperatureMeasurement()
        for flags in 0..<8 {
            var value: [UInt8] = [UInt8(flags), 0x6D, 0x01, 0x00, 0xFF]
            var expected = ["temperature"]
            if flags & 0x02 != 0 {
                value += Self.timestamp
                expected.append("timestamp")
            }
            if flags & 0x04 != 0 {
                value.append(0x06)
                expected.append("temperature_type")
            }
            let fields = try decoder.decode(value)
            #expect(names(fields) == expected, "flags \(flags)")
            #expect(fields[0].unit == (flags & 0x01 != 0 ? "°F" : "°C"))
            #expect(fields[0].value == .double(36.5))
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test func bloodPressureMeasurement() throws {
        let decoder = BloodPressureMeasurement()
        for flags in 0..<32 {
            var value: [UInt8] = [UInt8(flags)] + bytes("7800 5000 5D00")
            var expected = ["systolic", "diastolic", "mean_arterial_pressure"]
            if flags & 0x02 != 0 {
                value += Self.timestamp
                expected.append("timestamp")
            }
            if flags & 0x04 != 0 {
                value += [0x48, 0x00]
                expected.append("pulse_rate")
            }
            if flags & 0x08 != 0 {
                value.append(0x03)
                expected.append("user_id")
            }
            if flags & 0x10 != 0 {
                value += [0x3F, 0x00]
                expected += [
                    "body_movement_detected", "cuff_too_loose", "irregular_pulse", "pulse_rate_range",
                    "improper_measurement_position",
                ]
            }
            let fields = try decoder.decode(value)
            #expect(names(fields) == expected, "flags \(flags)")
            #expect(fields[0].unit == (flags & 0x01 != 0 ? "kPa" : "mmHg"))
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test func weightMeasurement() throws {
        let decoder = WeightMeasurement()
        for flags in 0..<16 {
            var value: [UInt8] = [UInt8(flags), 0xB0, 0x36]
            var expected = ["weight"]
            if flags & 0x02 != 0 {
                value += Self.timestamp
                expected.append("timestamp")
            }
            if flags & 0x04 != 0 {
                value.append(0x01)
                expected.append("user_id")
            }
            if flags & 0x08 != 0 {
                value += [0xE1, 0x00, 0xBC, 0x02]
                expected += ["bmi", "height"]
            }
            let fields = try decoder.decode(value)
            #expect(names(fields) == expected, "flags \(flags)")
            #expect(fields[0].unit == (flags & 0x01 != 0 ? "lb" : "kg"))
            #expect(fields[0].value == .double(flags & 0x01 != 0 ? 140 : 70))
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test func cscMeasurement() throws {
        let decoder = CSCMeasurementCharacteristic()
        for flags in 0..<4 {
            var value: [UInt8] = [UInt8(flags)]
            var expected: [String] = []
            if flags & 0x01 != 0 {
                value += bytes("00010000 0004")
                expected += ["cumulative_wheel_revolutions", "last_wheel_event_time"]
            }
            if flags & 0x02 != 0 {
                value += bytes("1000 0002")
                expected += ["cumulative_crank_revolutions", "last_crank_event_time"]
            }
            #expect(names(try decoder.decode(value)) == expected, "flags \(flags)")
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test func rscMeasurement() throws {
        let decoder = RSCMeasurement()
        for flags in 0..<8 {
            var value: [UInt8] = [UInt8(flags), 0x80, 0x03, 0xB4]
            var expected = ["speed", "cadence"]
            if flags & 0x01 != 0 {
                value += [0x64, 0x00]
                expected.append("stride_length")
            }
            if flags & 0x02 != 0 {
                value += [0x10, 0x27, 0x00, 0x00]
                expected.append("total_distance")
            }
            expected.append("running")
            let fields = try decoder.decode(value)
            #expect(names(fields) == expected, "flags \(flags)")
            #expect(fields.last?.value == .bool(flags & 0x04 != 0))
            checkLengthErrors(decoder, value, flags: flags)
        }
    }

    @Test func cyclingPowerMeasurementAllThirteenFlagBits() throws {
        let decoder = CyclingPowerMeasurement()
        // (flag bit, bytes it adds, fields it adds)
        let parts: [(UInt16, String, [String])] = [
            (0x0001, "64", ["pedal_power_balance", "pedal_power_balance_reference"]),
            (0x0004, "4000", ["accumulated_torque", "accumulated_torque_source"]),
            (0x0010, "10000000 0008", ["cumulative_wheel_revolutions", "last_wheel_event_time"]),
            (0x0020, "0500 0004", ["cumulative_crank_revolutions", "last_crank_event_time"]),
            (0x0040, "E803 1800", ["maximum_force", "minimum_force"]),
            (0x0080, "4000 E0FF", ["maximum_torque", "minimum_torque"]),
            (0x0100, "5A0014", ["maximum_angle", "minimum_angle"]),
            (0x0200, "0A00", ["top_dead_spot_angle"]),
            (0x0400, "B400", ["bottom_dead_spot_angle"]),
            (0x0800, "0C00", ["accumulated_energy"]),
            (0x1000, "", ["offset_compensation"]),
        ]
        for flags in 0..<UInt16(0x2000) {
            var value: [UInt8] = [UInt8(flags & 0xFF), UInt8(flags >> 8), 0x06, 0x01]
            var expected = ["instantaneous_power"]
            for (bit, hex, fields) in parts where flags & bit != 0 {
                value += bytes(hex)
                expected += fields
            }
            let decoded = try decoder.decode(value)
            #expect(names(decoded) == expected, "flags \(flags)")
            if flags & 0x0001 != 0 {
                #expect(decoded[2].value == .string(flags & 0x0002 != 0 ? "left" : "unknown"))
            }
            if flags & 0x1000 == 0 {
                checkLengthErrors(decoder, value, flags: Int(flags))
            }
        }
    }
}
