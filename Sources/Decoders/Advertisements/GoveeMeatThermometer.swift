/// Govee's Bluetooth meat thermometers (H5181, H5182, H5183, H5184, H5185, H5198): manufacturer
/// data of a model-specific company id (or any, with the model in the advertised name), 14, 17 or
/// 20 bytes after the company id. Eight header bytes (byte 6: which probes the H5184 and H5198
/// report, 1/65/129/193 for probes 1–2, 2/66/130/194 for probes 3–4), then big-endian int16
/// values in 0.01 °C: per probe its temperature and its alarm temperature (the H5198 also a low
/// alarm), with a separator byte (H5182, H5184) or word (H5185) between the two probes. A negative
/// value (no probe plugged in, no alarm set) is published as null.
struct GoveeMeatThermometer: Equatable {
    var model: String
    /// The values after the header, in order: a field name with `#` for the probe number, or nil
    /// for a separator of `width` bytes.
    var values: [(name: String?, width: Int)]
    /// Whether byte 6 says which pair of probes the frame carries.
    var pairedProbes: Bool
    var length: Int

    static func == (left: Self, right: Self) -> Bool { left.model == right.model }

    static let one: [(name: String?, width: Int)] = [("temperature_probe_#1", 2), ("temperature_alarm_probe_#1", 2)]
    static let two: [(name: String?, width: Int)] =
        one + [(nil, 1), ("temperature_probe_#2", 2), ("temperature_alarm_probe_#2", 2)]

    static let models: [GoveeMeatThermometer] = [
        GoveeMeatThermometer(model: "H5181", values: one, pairedProbes: false, length: 14),
        GoveeMeatThermometer(model: "H5183", values: one, pairedProbes: false, length: 14),
        GoveeMeatThermometer(model: "H5182", values: two, pairedProbes: false, length: 17),
        GoveeMeatThermometer(model: "H5184", values: two, pairedProbes: true, length: 17),
        GoveeMeatThermometer(
            model: "H5185",
            values: one + [(nil, 2), ("temperature_probe_#2", 2), ("temperature_alarm_probe_#2", 2)],
            pairedProbes: false, length: 20),
        GoveeMeatThermometer(
            model: "H5198",
            values: one + [
                ("low_temperature_alarm_probe_#1", 2), ("temperature_probe_#2", 2),
                ("temperature_alarm_probe_#2", 2), ("low_temperature_alarm_probe_#2", 2),
            ],
            pairedProbes: true, length: 20),
    ]

    /// The company ids each model advertises under.
    static let companies: [UInt16: String] = [
        0xF861: "H5181", 0x388A: "H5181", 0xEA42: "H5181", 0xAAA2: "H5181", 0xD14B: "H5181",
        0x67DD: "H5183", 0xE02F: "H5183", 0xF79F: "H5183", 0x2730: "H5182", 0x1B36: "H5184",
        0x4A32: "H5185", 0x0332: "H5185", 0x4C32: "H5185", 0x3022: "H5198",
    ]

    /// The model for a company id, entry length and name (the name's model wins).
    static func model(company: UInt16, length: Int, name: String) -> GoveeMeatThermometer? {
        if let named = models.first(where: { name.contains($0.model) && $0.length == length }) { return named }
        guard let model = companies[company] else { return nil }
        return models.first { $0.model == model && $0.length == length }
    }

    func fields(_ reader: inout ByteReader) throws(DecoderError) -> [DecodedField] {
        let header = try reader.bytes(8, "header")
        var first = 1
        if pairedProbes {
            switch header[6] {
            case 1, 65, 129, 193: first = 1
            case 2, 66, 130, 194: first = 3
            default:
                throw DecoderError(
                    .invalidValue, field: "probe_pair", offset: 8,
                    message: "\(header[6]) names no pair of probes (1/65/129/193: 1–2, 2/66/130/194: 3–4)")
            }
        }
        var fields: [DecodedField] = [.string("model", model)]
        for value in values {
            guard let template = value.name else {
                try reader.skip(value.width, "separator")
                continue
            }
            let probe = template.hasSuffix("#1") ? first : first + 1
            let name = String(template.dropLast(2)) + String(probe)
            let raw = try reader.int16BE(name)
            fields.append(
                raw < 0
                    ? DecodedField(name: name, value: .null, unit: "°C", kind: .temperature)
                    : .double(name, Scale.decimal(Int64(raw), exponent: -2), unit: "°C", kind: .temperature))
        }
        try reader.skip(length - 8 - values.reduce(0) { $0 + $1.width }, "reserved")
        return fields
    }
}
