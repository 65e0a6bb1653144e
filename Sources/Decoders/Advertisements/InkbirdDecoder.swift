import Bluetooth

/// INKBIRD sensors that broadcast their readings in manufacturer data, recognised by the
/// advertised name; the two "company-id" bytes are data
/// (``AdvertisementSource/anyManufacturerData``; lengths below include them).
///
/// - **IBS-TH1** (`sps`), **IBS-TH2 / IBS-P01B** (`tps`), 9 bytes: int16 LE temperature in
///   0.01 °C (the company-id bytes), uint16 LE humidity in 0.01 %, 3 bytes, uint8 battery %, 1
///   byte. A `tps` humidity of 0 or 0xFFFF means no humidity sensor (IBS-P01B probe): no
///   `humidity` field.
/// - **ITH-11-B, ITH-13-B, ITH-21-B, IBS-P02B** (`ith-11-b`, …), 18 bytes: 6 bytes, int16 LE
///   temperature in 0.1 °C, uint16 LE humidity in 0.1 % (0: no humidity sensor), uint8 battery %,
///   7 bytes.
/// - **IBT-2X, IBT-4XS, IBT-6XS** BBQ thermometers (name containing `iBBQ` or `xBBQ`), 12, 14,
///   18 or 22 bytes: 10 bytes, then int16 LE per probe in 0.1 °C (1, 2, 4 or 6 probes);
///   0xFFFF is a probe not plugged in (`temperature_probe_N` null).
///
/// A humidity above 100 % or a battery above 100 % marks a corrupt frame: `invalid_value`.
package struct InkbirdDecoder: AdvertisementDecoder {
    package let name = "inkbird"
    package let source = AdvertisementSource.anyManufacturerData

    package init() {}

    enum Frame: Equatable {
        /// 9 bytes; `humidityOptional` for `tps` (IBS-TH2 and the probe-only IBS-P01B).
        case hygrometer(model: String, humidityOptional: Bool)
        /// 18 bytes.
        case ith(model: String)
        /// 10 header bytes and this many probes.
        case bbq(probes: Int)
    }

    static let hygrometers: [String: Frame] = [
        "sps": .hygrometer(model: "IBS-TH", humidityOptional: false),
        "tps": .hygrometer(model: "IBS-TH2/P01B", humidityOptional: true),
        "ith-11-b": .ith(model: "ITH-11-B"), "ith-13-b": .ith(model: "ITH-13-B"),
        "ith-21-b": .ith(model: "ITH-21-B"), "ibs-p02b": .ith(model: "IBS-P02B"),
    ]

    static let probesByLength = [12: 1, 14: 2, 18: 4, 22: 6]

    /// The frame a name and a payload length (company-id bytes included) announce.
    static func frame(localName: String?, length: Int) -> Frame? {
        guard let lower = localName?.lowercased() else { return nil }
        if let frame = hygrometers[lower] {
            switch frame {
            case .hygrometer: return length == 9 ? frame : nil
            default: return length == 18 ? frame : nil
            }
        }
        if lower.contains("ibbq") || lower.contains("xbbq"), let probes = probesByLength[length] {
            return .bbq(probes: probes)
        }
        return nil
    }

    package func accepts(_ payload: [UInt8]) -> Bool { false }

    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        Self.frame(localName: context.localName, length: payload.count) != nil
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        guard let frame = Self.frame(localName: context.localName, length: payload.count) else {
            throw DecoderError(
                .unsupported, field: "name", offset: 0,
                message:
                    "no INKBIRD frame of \(payload.count) byte(s) for the name '\(context.localName ?? "")' (sps, tps, ith-11-b, ith-13-b, ith-21-b, ibs-p02b, iBBQ)"
            )
        }
        var reader = ByteReader(payload)
        var fields: [DecodedField]
        switch frame {
        case .hygrometer(let model, let humidityOptional):
            let temperature = try reader.int16("temperature")
            let humidity = try reader.uint16("humidity")
            try reader.skip(3, "reserved")
            let battery = try reader.uint8("battery")
            try reader.skip(1, "reserved")
            let fitted = !(humidityOptional && (humidity == 0 || humidity == 0xFFFF))
            fields = [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -2), unit: "°C", kind: .temperature)
            ]
            if fitted {
                try Self.check(humidity: Int64(humidity), limit: 10_000, offset: 2)
                fields.append(
                    .double("humidity", Scale.decimal(Int64(humidity), exponent: -2), unit: "%", kind: .humidity))
            }
            try Self.check(battery: battery, offset: 7)
            fields += [.int("battery", battery, unit: "%", kind: .battery), .string("model", model)]
        case .ith(let model):
            try reader.skip(6, "header")
            let temperature = try reader.int16("temperature")
            let humidity = try reader.uint16("humidity")
            let battery = try reader.uint8("battery")
            try reader.skip(7, "reserved")
            try Self.check(humidity: Int64(humidity), limit: 1_000, offset: 8)
            try Self.check(battery: battery, offset: 10)
            fields = [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -1), unit: "°C", kind: .temperature)
            ]
            if humidity != 0 {
                fields.append(
                    .double("humidity", Scale.decimal(Int64(humidity), exponent: -1), unit: "%", kind: .humidity))
            }
            fields += [.int("battery", battery, unit: "%", kind: .battery), .string("model", model)]
        case .bbq(let probes):
            try reader.skip(10, "header")
            fields = []
            for probe in 1...probes {
                let label = "temperature_probe_\(probe)"
                let raw = try reader.int16(label)
                fields.append(
                    raw == -1
                        ? DecodedField(name: label, value: .null, unit: "°C", kind: .temperature)
                        : .double(label, Scale.decimal(Int64(raw), exponent: -1), unit: "°C", kind: .temperature))
            }
            fields.append(.string("model", "iBBQ-\(probes)"))
        }
        try reader.expectEnd(name)
        return fields
    }

    /// Relative humidity above 100 % (`limit` in the frame's steps) is a corrupt frame.
    static func check(humidity: Int64, limit: Int64, offset: Int) throws(DecoderError) {
        guard humidity <= limit else {
            throw DecoderError(.invalidValue, field: "humidity", offset: offset, message: "above 100 %")
        }
    }

    /// A battery above 100 % is a corrupt frame.
    static func check(battery: UInt8, offset: Int) throws(DecoderError) {
        guard battery <= 100 else {
            throw DecoderError(.invalidValue, field: "battery", offset: offset, message: "\(battery) is above 100 %")
        }
    }
}
