public import Bluetooth

/// Intermediate Temperature (0x2A1E), Health Thermometer Service 1.0 §3.3 (notified while a
/// measurement settles); same layout as Temperature Measurement.
public struct IntermediateTemperature: CharacteristicDecoder {
    public let uuid = BluetoothUUID(UInt16(0x2A1E))
    public let name = "intermediate_temperature"

    public init() {}

    public func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        try TemperatureMeasurementFormat.decode(bytes, name: name)
    }
}
