import Bluetooth

/// Pressure (0x2A6D), Environmental Sensing Service: uint32 in 0.1 Pa, published in hPa.
package struct EnvironmentalPressure: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A6D))
    package let name = "pressure"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let raw = try reader.uint32("pressure")
        try reader.expectEnd(name)
        return [.double("pressure", Scale.decimal(Int64(raw), exponent: -3), unit: "hPa", kind: .pressure)]
    }
}
