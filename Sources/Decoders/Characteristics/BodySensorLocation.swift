import Bluetooth

/// Body Sensor Location (0x2A38), Heart Rate Service 1.0 §3.2.
package struct BodySensorLocation: CharacteristicDecoder {
    package let uuid = BluetoothUUID(UInt16(0x2A38))
    package let name = "body_sensor_location"

    static let locations = ["other", "chest", "wrist", "finger", "hand", "ear_lobe", "foot"]

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        let code = Int(try reader.uint8("body_sensor_location"))
        guard code < Self.locations.count else {
            throw DecoderError(
                .invalidValue, field: "body_sensor_location", offset: 0, message: "reserved value \(code)")
        }
        try reader.expectEnd("body_sensor_location")
        return [.string("body_sensor_location", Self.locations[code])]
    }
}
