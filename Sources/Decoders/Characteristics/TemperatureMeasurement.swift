public import Bluetooth

/// Temperature Measurement (0x2A1C), Health Thermometer Service 1.0 §3.1 (indicated).
public struct TemperatureMeasurement: CharacteristicDecoder {
    public let uuid = BluetoothUUID(UInt16(0x2A1C))
    public let name = "temperature_measurement"

    public init() {}

    public func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try TemperatureMeasurementFormat.decode(bytes, name: name)
    }
}
