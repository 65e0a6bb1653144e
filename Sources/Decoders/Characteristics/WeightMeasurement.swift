import Bluetooth

/// Weight Measurement (0x2A9D), Weight Scale Service 1.0 §3.2.
///
/// Flags: bit 0 unit (SI: 0.005 kg, 0.001 m / imperial: 0.01 lb, 0.1 in), bit 1 time stamp,
/// bit 2 user id, bit 3 BMI (0.1 kg/m²) and height. Weight 0xFFFF means "measurement unsuccessful".
package struct WeightMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A9D))
    package let name = "weight_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        let imperial = flags & 0x01 != 0
        let rawWeight = try reader.uint16("weight")
        let weight: DecodedValue =
            rawWeight == 0xFFFF
            ? .null
            : .double(
                imperial
                    ? Scale.decimal(Int64(rawWeight), exponent: -2)
                    : Scale.decimal(Int64(rawWeight), multiplier: 5, exponent: -3))
        var fields = [DecodedField(name: "weight", value: weight, unit: imperial ? "lb" : "kg", kind: .weight)]
        if flags & 0x02 != 0 {
            fields.append(
                DecodedField(name: "timestamp", value: try GATTDateTime(from: &reader, field: "timestamp").decodedValue)
            )
        }
        if flags & 0x04 != 0 {
            let user = try reader.uint8("user_id")
            fields.append(DecodedField(name: "user_id", value: user == 0xFF ? .null : .int(Int64(user))))
        }
        if flags & 0x08 != 0 {
            let bmi = try reader.uint16("bmi")
            let height = try reader.uint16("height")
            fields.append(.double("bmi", Scale.decimal(Int64(bmi), exponent: -1), unit: "kg/m²", kind: .measurement))
            fields.append(
                .double(
                    "height", Scale.decimal(Int64(height), exponent: imperial ? -1 : -3), unit: imperial ? "in" : "m",
                    kind: .distance))
        }
        try reader.expectEnd(name)
        return fields
    }
}
