import Bluetooth

/// Cycling Power Measurement (0x2A63), Cycling Power Service 1.1 §3.2.
///
/// Flags (uint16): bit 0 pedal power balance present (uint8, 1/2 %), bit 1 balance reference is
/// the left pedal, bit 2 accumulated torque present (uint16, 1/32 N·m), bit 3 torque source is the
/// crank (else wheel), bit 4 wheel revolution data (uint32 + uint16 in 1/2048 s), bit 5 crank
/// revolution data (uint16 + uint16 in 1/1024 s), bit 6 extreme force magnitudes (sint16 max, min,
/// N), bit 7 extreme torque magnitudes (sint16 max, min, 1/32 N·m), bit 8 extreme angles (two
/// 12-bit angles in 3 bytes, degrees), bit 9 top dead spot angle (uint16, °), bit 10 bottom dead
/// spot angle (uint16, °), bit 11 accumulated energy (uint16, kJ), bit 12 offset compensation
/// indicator. Instantaneous power is sint16 in W.
package struct CyclingPowerMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A63))
    package let name = "cycling_power_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint16("flags")
        var fields: [DecodedField] = [
            .int("instantaneous_power", try reader.int16("instantaneous_power"), unit: "W", kind: .power)
        ]
        if flags & 0x0001 != 0 {
            let balance = try reader.uint8("pedal_power_balance")
            fields.append(.double("pedal_power_balance", Double(balance) / 2, unit: "%", kind: .measurement))
            fields.append(.string("pedal_power_balance_reference", flags & 0x0002 != 0 ? "left" : "unknown"))
        }
        if flags & 0x0004 != 0 {
            let torque = try reader.uint16("accumulated_torque")
            fields.append(.double("accumulated_torque", Double(torque) / 32, unit: "N·m", kind: .counter))
            fields.append(.string("accumulated_torque_source", flags & 0x0008 != 0 ? "crank" : "wheel"))
        }
        if flags & 0x0010 != 0 {
            fields.append(
                .int("cumulative_wheel_revolutions", try reader.uint32("cumulative_wheel_revolutions"), kind: .counter))
            let time = try reader.uint16("last_wheel_event_time")
            fields.append(.double("last_wheel_event_time", Double(time) / 2048, unit: "s"))
        }
        if flags & 0x0020 != 0 {
            fields.append(
                .int("cumulative_crank_revolutions", try reader.uint16("cumulative_crank_revolutions"), kind: .counter))
            let time = try reader.uint16("last_crank_event_time")
            fields.append(.double("last_crank_event_time", Double(time) / 1024, unit: "s"))
        }
        if flags & 0x0040 != 0 {
            fields.append(.int("maximum_force", try reader.int16("maximum_force_magnitude"), unit: "N"))
            fields.append(.int("minimum_force", try reader.int16("minimum_force_magnitude"), unit: "N"))
        }
        if flags & 0x0080 != 0 {
            fields.append(
                .double("maximum_torque", Double(try reader.int16("maximum_torque_magnitude")) / 32, unit: "N·m"))
            fields.append(
                .double("minimum_torque", Double(try reader.int16("minimum_torque_magnitude")) / 32, unit: "N·m"))
        }
        if flags & 0x0100 != 0 {
            let angles = try reader.uint24("extreme_angles")
            fields.append(.int("maximum_angle", angles & 0x0FFF, unit: "°"))
            fields.append(.int("minimum_angle", angles >> 12, unit: "°"))
        }
        if flags & 0x0200 != 0 {
            fields.append(.int("top_dead_spot_angle", try reader.uint16("top_dead_spot_angle"), unit: "°"))
        }
        if flags & 0x0400 != 0 {
            fields.append(.int("bottom_dead_spot_angle", try reader.uint16("bottom_dead_spot_angle"), unit: "°"))
        }
        if flags & 0x0800 != 0 {
            fields.append(
                .int("accumulated_energy", try reader.uint16("accumulated_energy"), unit: "kJ", kind: .counter))
        }
        if flags & 0x1000 != 0 {
            fields.append(.bool("offset_compensation", true))
        }
        try reader.expectEnd(name)
        return fields
    }
}
