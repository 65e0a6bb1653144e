import Bluetooth

/// RSC Measurement (0x2A53), Running Speed and Cadence Service 1.0 §3.1.
///
/// Speed uint16 in 1/256 m/s, cadence uint8 in steps/min; flags: bit 0 stride length present
/// (uint16, 0.01 m), bit 1 total distance present (uint32, 0.1 m), bit 2 running (else walking).
package struct RSCMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A53))
    package let name = "rsc_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        var fields: [DecodedField] = [
            .double("speed", Double(try reader.uint16("speed")) / 256, unit: "m/s", kind: .speed),
            .int("cadence", try reader.uint8("cadence"), unit: "steps/min", kind: .measurement),
        ]
        if flags & 0x01 != 0 {
            let stride = try reader.uint16("stride_length")
            fields.append(
                .double("stride_length", Scale.decimal(Int64(stride), exponent: -2), unit: "m", kind: .distance))
        }
        if flags & 0x02 != 0 {
            let distance = try reader.uint32("total_distance")
            fields.append(
                .double(
                    "total_distance", Scale.decimal(Int64(distance), exponent: -1), unit: "m",
                    kind: .sensor("distance", stateClass: .totalIncreasing)))
        }
        fields.append(.bool("running", flags & 0x04 != 0, kind: .binary("moving")))
        try reader.expectEnd(name)
        return fields
    }
}
