import Bluetooth

/// The ATC1441 advertising format of the custom firmware for Xiaomi LYWSD03MMC and similar
/// thermometers (https://github.com/atc1441/ATC_MiThermometer): service data 0x181A, 13 bytes,
/// big-endian: MAC (6), temperature int16 in 0.1 °C, humidity uint8 %, battery uint8 %,
/// battery uint16 mV, frame counter uint8.
///
/// The encrypted variant (8 bytes, ``ThermometerCipher``) carries temperature in 0.5 °C from
/// −40 °C, humidity in 0.5 %, and battery % (bits 0–6; above 100 reported as 100, as the format's
/// reference parser does) with the trigger in bit 7; it needs the bind key and the address.
package struct ATCThermometerDecoder: AdvertisementDecoder {
    package let name = "atc1441"
    package let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0x181A)))

    package init() {}

    /// The unencrypted format starts with the address; the prefix of the Xiaomi thermometers the
    /// firmware is made for (A4:C1:38). The encrypted format has no marker.
    package var payloadMarkers: [PayloadMarker] { [PayloadMarker([0xA4, 0xC1, 0x38])] }

    /// The unencrypted format's first six bytes: the address, as printed.
    package func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker] { [PayloadMarker(address.bytes)] }

    package func accepts(_ payload: [UInt8]) -> Bool { payload.count == 13 || payload.count == 8 }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        if payload.count == 8 { return try decrypted(payload, context: context) }
        var reader = ByteReader(payload)
        let mac = try reader.bytes(6, "mac")
        let temperature = try reader.int16BE("temperature")
        let fields: [DecodedField] = [
            .double("temperature", Scale.decimal(Int64(temperature), exponent: -1), unit: "°C", kind: .temperature),
            .int("humidity", try reader.uint8("humidity"), unit: "%", kind: .humidity),
            .int("battery", try reader.uint8("battery"), unit: "%", kind: .battery),
            .double(
                "battery_voltage", Scale.decimal(Int64(try reader.uint16BE("battery_voltage")), exponent: -3),
                unit: "V", kind: .voltage),
            .int("frame_counter", try reader.uint8("frame_counter")),
            .string("mac", Hex.string(mac, separator: ":").uppercased()),
        ]
        try reader.expectEnd(name)
        return fields
    }

    private func decrypted(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        let (counter, plaintext) = try ThermometerCipher.open(payload, context: context)
        var reader = ByteReader(plaintext)
        let temperature = try reader.uint8("temperature")
        let humidity = try reader.uint8("humidity")
        let battery = try reader.uint8("battery")
        try reader.expectEnd(name)
        return [
            .double(
                "temperature", Scale.decimal(Int64(temperature) * 5 - 400, exponent: -1), unit: "°C", kind: .temperature
            ),
            .double("humidity", Scale.decimal(Int64(humidity) * 5, exponent: -1), unit: "%", kind: .humidity),
            .int("battery", min(battery & 0x7F, 100), unit: "%", kind: .battery),
            .bool("trigger", battery & 0x80 != 0),
            .int("frame_counter", counter),
            .bool("encrypted", true),
        ]
    }
}
