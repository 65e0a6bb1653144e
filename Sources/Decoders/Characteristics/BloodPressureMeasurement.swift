import Bluetooth

/// Blood Pressure Measurement (0x2A35), Blood Pressure Service 1.0 §3.1.
///
/// Flags: bit 0 unit (mmHg / kPa), bit 1 time stamp, bit 2 pulse rate, bit 3 user id, bit 4
/// measurement status. Systolic, diastolic, mean arterial pressure and pulse rate are SFLOATs.
package struct BloodPressureMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A35))
    package let name = "blood_pressure_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        let unit = flags & 0x01 != 0 ? "kPa" : "mmHg"
        var fields: [DecodedField] = [
            .medical("systolic", try reader.sfloat("systolic"), unit: unit, kind: .pressure),
            .medical("diastolic", try reader.sfloat("diastolic"), unit: unit, kind: .pressure),
            .medical(
                "mean_arterial_pressure", try reader.sfloat("mean_arterial_pressure"), unit: unit, kind: .pressure),
        ]
        if flags & 0x02 != 0 {
            fields.append(
                DecodedField(name: "timestamp", value: try GATTDateTime(from: &reader, field: "timestamp").decodedValue)
            )
        }
        if flags & 0x04 != 0 {
            fields.append(.medical("pulse_rate", try reader.sfloat("pulse_rate"), unit: "bpm", kind: .measurement))
        }
        if flags & 0x08 != 0 {
            let user = try reader.uint8("user_id")
            fields.append(DecodedField(name: "user_id", value: user == 0xFF ? .null : .int(Int64(user))))
        }
        if flags & 0x10 != 0 {
            let status = try reader.uint16("measurement_status")
            let ranges = ["within_range", "above_upper_limit", "below_lower_limit", "reserved"]
            fields += [
                .bool("body_movement_detected", status & 0x0001 != 0, kind: .binary("problem")),
                .bool("cuff_too_loose", status & 0x0002 != 0, kind: .binary("problem")),
                .bool("irregular_pulse", status & 0x0004 != 0, kind: .binary("problem")),
                .string("pulse_rate_range", ranges[Int(status >> 3 & 0x03)]),
                .bool("improper_measurement_position", status & 0x0020 != 0, kind: .binary("problem")),
            ]
        }
        try reader.expectEnd(name)
        return fields
    }
}
