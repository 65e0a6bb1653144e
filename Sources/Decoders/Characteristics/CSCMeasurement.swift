import Bluetooth

/// CSC Measurement (0x2A5B), Cycling Speed and Cadence Service 1.0 §3.1.
///
/// Flags: bit 0 wheel revolution data present (cumulative wheel revolutions uint32, last wheel
/// event time uint16 in 1/1024 s), bit 1 crank revolution data present (cumulative crank
/// revolutions uint16, last crank event time uint16 in 1/1024 s). Speed and cadence come from two
/// consecutive measurements: see ``CyclingRateCalculator``.
package struct CSCMeasurement: Sendable, Hashable {
    package struct Revolutions: Sendable, Hashable {
        /// Cumulative revolutions (wheel: 32 bits, crank: 16 bits; both wrap around).
        package var count: UInt32
        /// Time of the last event in 1/1024 s (wraps every 64 s).
        package var eventTime: UInt16

        package init(count: UInt32, eventTime: UInt16) {
            self.count = count
            self.eventTime = eventTime
        }
    }

    package var wheel: Revolutions?
    package var crank: Revolutions?

    package init(wheel: Revolutions? = nil, crank: Revolutions? = nil) {
        self.wheel = wheel
        self.crank = crank
    }

    package init(bytes: [UInt8]) throws(DecoderError) {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        if flags & 0x01 != 0 {
            wheel = Revolutions(
                count: try reader.uint32("cumulative_wheel_revolutions"),
                eventTime: try reader.uint16("last_wheel_event_time"))
        }
        if flags & 0x02 != 0 {
            crank = Revolutions(
                count: UInt32(try reader.uint16("cumulative_crank_revolutions")),
                eventTime: try reader.uint16("last_crank_event_time"))
        }
        try reader.expectEnd("csc_measurement")
    }

    package var fields: [DecodedField] {
        var fields: [DecodedField] = []
        if let wheel {
            fields.append(.int("cumulative_wheel_revolutions", wheel.count, kind: .counter))
            fields.append(.double("last_wheel_event_time", Double(wheel.eventTime) / 1024, unit: "s"))
        }
        if let crank {
            fields.append(.int("cumulative_crank_revolutions", crank.count, kind: .counter))
            fields.append(.double("last_crank_event_time", Double(crank.eventTime) / 1024, unit: "s"))
        }
        return fields
    }
}

/// The decoder for 0x2A5B values.
package struct CSCMeasurementCharacteristic: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A5B))
    package let name = "csc_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try CSCMeasurement(bytes: bytes).fields
    }
}
