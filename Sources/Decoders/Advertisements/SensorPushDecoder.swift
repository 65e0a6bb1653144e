import Bluetooth

/// SensorPush HT.w, HTP.xw and TC.x: manufacturer data of an advertiser listing the service
/// `ef090000-11d6-42ba-93b8-9dd7ec090ab0`, whose first two bytes (the "company id") are data.
///
/// Byte 0: bits 0–1 the page (only page 0 carries readings), bits 2–7 the device type (+ 64:
/// 64 HTP.xw, 65 HT.w, 66 TC.x). The bytes after it are one little-endian integer packing the
/// readings in mixed radix, each reading a digit `(value − minimum) / step`, the first reading in
/// the lowest digit:
///
/// | type | readings (minimum, maximum, step) |
/// |---|---|
/// | HTP.xw | temperature (−40, 140, 0.0025 °C), humidity (0, 100, 0.0025 %), pressure (30,000, 125,000, 1 Pa) |
/// | HT.w | temperature (−40, 125, 0.0025 °C), humidity (0, 100, 0.0025 %) |
/// | TC.x | thermocouple temperature (−200, 1,800, 0.0625 °C) |
///
/// The digit of a reading with `n` steps runs 0…n (n + 1 values). Published at the sensor's
/// resolution (0.0025 °C is not rounded); pressure in hPa.
package struct SensorPushDecoder: AdvertisementDecoder {
    package let name = "sensorpush"
    package static let service = BluetoothUUID("ef090000-11d6-42ba-93b8-9dd7ec090ab0")!
    package let source = AdvertisementSource.anyManufacturerData

    /// One packed reading: its name, range and step as the integer numbers of steps, and the
    /// step as a decimal (`stepMantissa × 10^stepExponent`).
    struct Packed: Sendable {
        var name: String
        var unit: String
        var kind: FieldKind
        var minimum: Int64
        var maximum: Int64
        var stepMantissa: Int64
        var stepExponent: Int
        /// Published = value / divisor (Pa → hPa).
        var divisorExponent = 0

        /// How many values the digit can take.
        var radix: UInt64 {
            // (maximum − minimum) / step, in integers: the step is mantissa × 10^exponent.
            var scaled = maximum - minimum
            for _ in 0..<(-stepExponent) { scaled *= 10 }
            return UInt64(scaled / stepMantissa) + 1
        }
    }

    /// A temperature from `minimum` to `maximum` °C in steps of `step` ten-thousandths.
    static func temperature(_ minimum: Int64, _ maximum: Int64, step: Int64 = 25) -> Packed {
        Packed(
            name: "temperature", unit: "°C", kind: .temperature, minimum: minimum, maximum: maximum,
            stepMantissa: step, stepExponent: -4)
    }

    /// Humidity 0–100 % in steps of 0.0025 %.
    static let humidity = Packed(
        name: "humidity", unit: "%", kind: .humidity, minimum: 0, maximum: 100, stepMantissa: 25, stepExponent: -4)

    /// The packed readings per device type.
    static let layouts: [UInt8: (model: String, readings: [Packed])] = [
        64: (
            "HTP.xw",
            [
                temperature(-40, 140), humidity,
                Packed(
                    name: "pressure", unit: "hPa", kind: .pressure, minimum: 30_000, maximum: 125_000, stepMantissa: 1,
                    stepExponent: 0, divisorExponent: 2),
            ]
        ),
        65: ("HT.w", [temperature(-40, 125), humidity]),
        66: ("TC.x", [temperature(-200, 1_800, step: 625)]),
    ]

    package init() {}

    /// Only from an advertiser listing ``service``: the company-id bytes alone do not identify the format.
    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        context.serviceUUIDs.contains(Self.service) && accepts(payload)
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let header = try reader.uint8("header")
        guard header & 0x03 == 0 else {
            throw DecoderError(
                .unsupported, field: "page", offset: 0, message: "page \(header & 0x03) carries no readings")
        }
        let type = 64 + (header >> 2)
        guard let layout = Self.layouts[type] else {
            throw DecoderError(.unsupported, field: "device_type", offset: 0, message: "SensorPush device type \(type)")
        }
        guard reader.remaining <= 8 else {
            throw DecoderError(
                .trailingBytes, field: "readings", offset: 1, message: "more than 8 bytes of packed readings")
        }
        guard !reader.isAtEnd else {
            throw DecoderError(.truncated, field: "readings", offset: 1, message: "no packed readings")
        }
        var packed = try reader.unsigned(reader.remaining, "readings")
        var fields: [DecodedField] = [.string("model", layout.model)]
        for reading in layout.readings {
            let digit = packed % reading.radix
            packed /= reading.radix
            // minimum + digit × step, exactly: in units of the step's last decimal.
            var minimum = reading.minimum
            for _ in 0..<(-reading.stepExponent) { minimum *= 10 }
            let value = Scale.decimal(
                minimum + Int64(digit) * reading.stepMantissa, exponent: reading.stepExponent - reading.divisorExponent)
            fields.append(.double(reading.name, value, unit: reading.unit, kind: reading.kind))
        }
        return fields
    }
}
