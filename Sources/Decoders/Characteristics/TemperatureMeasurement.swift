import Bluetooth

/// Temperature Measurement (0x2A1C), Health Thermometer Service 1.0 §3.1 (indicated).
package struct TemperatureMeasurement: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A1C))
    package let name = "temperature_measurement"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try TemperatureMeasurementFormat.decode(bytes, name: name)
    }
}
