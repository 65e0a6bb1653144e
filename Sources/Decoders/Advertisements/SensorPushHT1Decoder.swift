import Bluetooth

/// The first SensorPush (HT1): manufacturer data of an advertiser listing the service
/// `ef090000-11d6-42ba-93b8-9dd7ec090aa9`, four bytes counted from the "company id" (which is
/// data): a 12-bit humidity word (byte 0, bits 0–3 of byte 1), a 14-bit temperature word
/// (bits 4–7 of byte 1, byte 2, bits 0–1 of byte 3) and the device type in bits 2–6 of byte 3
/// (1 for the HT1). The words are the Sensirion SHT21's raw readings: humidity
/// −6 + 125 × word / 2¹² % (clamped to 0–100), temperature −46.85 + 175.72 × word / 2¹⁴ °C;
/// both published rounded to 0.01, the sensor's resolution.
package struct SensorPushHT1Decoder: AdvertisementDecoder {
    package let name = "sensorpush_ht1"
    package static let service = BluetoothUUID("ef090000-11d6-42ba-93b8-9dd7ec090aa9")!
    package let source = AdvertisementSource.anyManufacturerData

    package init() {}

    /// Only from an advertiser listing ``service``: the company-id bytes alone do not identify the format.
    package func accepts(_ payload: [UInt8], context: AdvertisementContext) -> Bool {
        context.serviceUUIDs.contains(Self.service) && accepts(payload)
    }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(payload)
        let word = try reader.uint32("readings")
        let type = (word >> 26) & 0x1F
        guard type == 1 else {
            throw DecoderError(.unsupported, field: "device_type", offset: 3, message: "SensorPush device type \(type)")
        }
        let humidityWord = Double(word & 0x0FFF)
        let temperatureWord = Double((word >> 12) & 0x3FFF)
        let humidity = min(100, max(0, -6 + 125 * humidityWord / 4_096))
        let temperature = -46.85 + 175.72 * temperatureWord / 16_384
        return [
            .string("model", "HT1"),
            .double("temperature", Self.hundredths(temperature), unit: "°C", kind: .temperature),
            .double("humidity", Self.hundredths(humidity), unit: "%", kind: .humidity),
        ]
    }

    static func hundredths(_ value: Double) -> Double {
        (value * 100).rounded() / 100
    }
}
