/// The layout shared by Temperature Measurement (0x2A1C) and Intermediate Temperature (0x2A1E),
/// Health Thermometer Service 1.0 §3.1/§3.3.
///
/// Flags: bit 0 unit (°C / °F), bit 1 time stamp present, bit 2 temperature type present.
/// The temperature is an IEEE 11073 32-bit FLOAT.
enum TemperatureMeasurementFormat {
    static let temperatureTypes = [
        1: "armpit", 2: "body", 3: "ear", 4: "finger", 5: "gastrointestinal_tract", 6: "mouth", 7: "rectum",
        8: "toe", 9: "tympanum",
    ]

    static func decode(_ bytes: [UInt8], name: String) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let flags = try reader.uint8("flags")
        let temperature = try reader.medicalFloat("temperature")
        var fields: [DecodedField] = [
            .medical("temperature", temperature, unit: flags & 0x01 != 0 ? "°F" : "°C", kind: .temperature)
        ]
        if flags & 0x02 != 0 {
            fields.append(
                DecodedField(name: "timestamp", value: try GATTDateTime(from: &reader, field: "timestamp").decodedValue)
            )
        }
        if flags & 0x04 != 0 {
            let start = reader.offset
            let code = Int(try reader.uint8("temperature_type"))
            guard let type = temperatureTypes[code] else {
                throw DecoderError(
                    .invalidValue, field: "temperature_type", offset: start, message: "reserved value \(code)")
            }
            fields.append(.string("temperature_type", type))
        }
        try reader.expectEnd(name)
        return fields
    }
}
