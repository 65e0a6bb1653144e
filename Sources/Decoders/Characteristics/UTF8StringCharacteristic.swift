import Bluetooth

/// A characteristic whose value is one UTF-8 string (Device Name, Device Information strings).
package struct UTF8StringCharacteristic: CharacteristicDecoder {
    package let uuid: BluetoothUUID
    package let name: String
    /// The output field's name (`model_number`).
    package let field: String

    package init(uuid: UInt16, name: String, field: String) {
        self.uuid = BluetoothUUID(uuid)
        self.name = name
        self.field = field
    }

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        return [.string(field, try reader.utf8(field))]
    }
}
