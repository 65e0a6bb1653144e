import Bluetooth

/// Intermediate Temperature (0x2A1E), Health Thermometer Service 1.0 §3.3 (notified while a
/// measurement settles); same layout as Temperature Measurement.
package struct IntermediateTemperature: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A1E))
    package let name = "intermediate_temperature"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try TemperatureMeasurementFormat.decode(bytes, name: name)
    }
}
