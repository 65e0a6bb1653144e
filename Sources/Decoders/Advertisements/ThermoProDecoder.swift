import Bluetooth

/// ThermoPro TP35x / TP39x thermo-hygrometers (TP357, TP357S, TP358, TP359, TP393, TP397):
/// manufacturer data whose two "company-id" bytes are data, recognised by the advertised name
/// (`TP35…`, `TP39…`; the company id changes with every reading). After a tag byte (0xC2) come
/// int16 little-endian temperature in 0.1 °C, uint8 humidity %, and a status byte whose bits 0–1
/// give the battery in three steps (0 low, 1 half, 2 full; published as 1, 50 and 100 %, as
/// the reference parser does, with `battery_low`); 3 means no battery reading. Temperature and
/// humidity all 0xFF mean no reading (null). At least one more byte follows, not decoded.
/// The payload starts with the two company-id bytes (``AdvertisementSource/anyManufacturerData``).
package struct ThermoProDecoder: AdvertisementDecoder {
    package let name = "thermopro"
    package let source = AdvertisementSource.anyManufacturerData

    package init() {}

    /// The model from the local name (`TP357 (2B54)` → `TP357`), nil for another name.
    static func model(_ localName: String?) -> String? {
        guard let localName, localName.hasPrefix("TP35") || localName.hasPrefix("TP39") else { return nil }
        return String(localName.split(separator: " ").first ?? Substring(localName))
    }

    /// Only with a ThermoPro name (``accepts(_:context:)``).
    package func accepts(_ payload: [UInt8]) -> Bool { false }

    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        Self.model(context.localName) != nil && payload.count >= 6
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        try reader.skip(1, "tag")
        let temperatureHumidity = try reader.bytes(3, "temperature_humidity")
        let status = try reader.uint8("status")
        try reader.skip(1, "reserved")
        _ = reader.rest()
        var fields: [DecodedField] = []
        if temperatureHumidity == [0xFF, 0xFF, 0xFF] {
            fields += [
                DecodedField(name: "temperature", value: .null, unit: "°C", kind: .temperature),
                DecodedField(name: "humidity", value: .null, unit: "%", kind: .humidity),
            ]
        } else {
            var inner = ByteReader(temperatureHumidity)
            let temperature = try inner.int16("temperature")
            fields += [
                .double("temperature", Scale.decimal(Int64(temperature), exponent: -1), unit: "°C", kind: .temperature),
                .int("humidity", try inner.uint8("humidity"), unit: "%", kind: .humidity),
            ]
        }
        let level = status & 0x03
        if level < 3 {
            fields.append(.int("battery", [1, 50, 100][Int(level)], unit: "%", kind: .battery))
            fields.append(.bool("battery_low", level == 0, kind: .binary("battery")))
        }
        if let model = Self.model(context.localName) { fields.append(.string("model", model)) }
        return fields
    }
}
