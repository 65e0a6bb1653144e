import Bluetooth

/// The pvvx "custom" advertising format (https://github.com/pvvx/ATC_MiThermometer#custom-format-all-data-little-endian):
/// service data 0x181A, 15 bytes, little-endian: MAC (6, reversed), temperature int16 in 0.01 °C,
/// humidity uint16 in 0.01 %, battery uint16 mV, battery uint8 %, counter uint8, flags uint8
/// (bit 0 reed switch / GPIO pin, bit 1 GPIO trigger output, bit 2 output controlled by the
/// thresholds, bit 3 temperature trigger, bit 4 humidity trigger).
///
/// The encrypted variant (11 bytes, ``ThermometerCipher``) carries temperature, humidity,
/// battery % and the flags; it needs the bind key and the address.
package struct PVVXThermometerDecoder: AdvertisementDecoder {
    package let name = "pvvx"
    package let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0x181A)))

    package init() {}

    /// The unencrypted format's address (reversed) ends with the prefix of the Xiaomi
    /// thermometers the firmware is mostly flashed on (LYWSD03MMC, MHO-C401: A4:C1:38); another
    /// prefix, or the encrypted format (no address), has no marker.
    package var payloadMarkers: [PayloadMarker] { [PayloadMarker(offset: 3, [0x38, 0xC1, 0xA4])] }

    /// The unencrypted format's first six bytes: the address, reversed.
    package func payloadMarkers(for address: BluetoothAddress) -> [PayloadMarker] {
        [PayloadMarker(address.bytes.reversed())]
    }

    package func accepts(_ payload: [UInt8]) -> Bool { payload.count == 15 || payload.count == 11 }

    package func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
        guard payload.count != 11 else {
            let (counter, plaintext) = try ThermometerCipher.open(payload, context: context)
            var reader = ByteReader(plaintext)
            let fields = try climate(&reader, voltage: false, counter: counter)
            try reader.expectEnd(name)
            return fields + [.bool("encrypted", true)]
        }
        var reader = ByteReader(payload)
        let mac = try reader.bytes(6, "mac")
        let fields = try climate(&reader, voltage: true, counter: nil)
        try reader.expectEnd(name)
        return fields + [.string("mac", Hex.string(mac.reversed(), separator: ":").uppercased())]
    }

    /// Temperature, humidity, (battery voltage,) battery %, counter and flags, as both variants
    /// carry them; the encrypted one has no voltage and its counter precedes the ciphertext.
    private func climate(_ reader: inout ByteReader, voltage: Bool, counter known: UInt8?) throws(DecoderError)
        -> [DecodedField]
    {
        let temperature = try reader.int16("temperature")
        let humidity = try reader.uint16("humidity")
        let millivolts = voltage ? try reader.uint16("battery_voltage") : nil
        let battery = try reader.uint8("battery")
        let counter: UInt8
        if let known { counter = known } else { counter = try reader.uint8("counter") }
        let flags = try reader.uint8("flags")
        var fields: [DecodedField] = [
            .double("temperature", Scale.decimal(Int64(temperature), exponent: -2), unit: "°C", kind: .temperature),
            .double("humidity", Scale.decimal(Int64(humidity), exponent: -2), unit: "%", kind: .humidity),
            .int("battery", battery, unit: "%", kind: .battery),
        ]
        if let millivolts {
            fields.append(
                .double("battery_voltage", Scale.decimal(Int64(millivolts), exponent: -3), unit: "V", kind: .voltage))
        }
        return fields + [
            .int("counter", counter),
            .bool("reed_switch", flags & 0x01 != 0, kind: .binary("opening")),
            .bool("gpio_trigger", flags & 0x02 != 0),
            .bool("output_by_thresholds", flags & 0x04 != 0),
            .bool("temperature_trigger", flags & 0x08 != 0),
            .bool("humidity_trigger", flags & 0x10 != 0),
        ]
    }
}
