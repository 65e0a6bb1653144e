import Bluetooth

/// Heart Rate Measurement (0x2A37), Heart Rate Service 1.0 §3.1.
///
/// Flags: bit 0 value format (uint8 / uint16), bits 1–2 sensor contact (bit 2 supported, bit 1
/// detected), bit 3 energy expended present (uint16, kJ), bit 4 RR intervals present (uint16 each,
/// 1/1024 s, as many as the value holds).
package struct HeartRateMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A37))
    package let name = "heart_rate_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        var fields: [DecodedField] = []
        let heartRate =
            flags & 0x01 != 0 ? Int64(try reader.uint16("heart_rate")) : Int64(try reader.uint8("heart_rate"))
        fields.append(.int("heart_rate", heartRate, unit: "bpm", kind: .measurement))
        if flags & 0x04 != 0 {
            // Skin contact: no Home Assistant device class means it (`connectivity` would read "Connected").
            fields.append(.bool("sensor_contact", flags & 0x02 != 0, kind: .binary(nil)))
        }
        if flags & 0x08 != 0 {
            fields.append(.int("energy_expended", try reader.uint16("energy_expended"), unit: "kJ", kind: .counter))
        }
        if flags & 0x10 != 0 {
            var intervals: [DecodedValue] = []
            while !reader.isAtEnd {
                intervals.append(.double(Double(try reader.uint16("rr_intervals[\(intervals.count)]")) / 1024))
            }
            fields.append(DecodedField(name: "rr_intervals", value: .array(intervals), unit: "s"))
        }
        try reader.expectEnd("heart_rate_measurement")
        return fields
    }
}
