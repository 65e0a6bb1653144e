import Bluetooth

/// The ATC1441 advertising format of the custom firmware for Xiaomi LYWSD03MMC and similar
/// thermometers (https://github.com/atc1441/ATC_MiThermometer): service data 0x181A, 13 bytes,
/// big-endian: MAC (6), temperature int16 in 0.1 °C, humidity uint8 %, battery uint8 %,
/// battery uint16 mV, frame counter uint8.
public struct ATCThermometerDecoder: AdvertisementDecoder {
    public let name = "atc1441"
    public let source = AdvertisementSource.serviceData(BluetoothUUID(UInt16(0x181A)))

    public init() {}

    public func accepts(_ payload: [UInt8]) -> Bool { payload.count == 13 }

    public func decode(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> [DecodedField] {
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
}
