public import Bluetooth

/// A characteristic whose value is one UTF-8 string (Device Name, Device Information strings).
public struct UTF8StringCharacteristic: CharacteristicDecoder {
    public let uuid: BluetoothUUID
    public let name: String
    /// The output field's name (`model_number`).
    public let field: String

    public init(uuid: UInt16, name: String, field: String) {
        self.uuid = BluetoothUUID(uuid)
        self.name = name
        self.field = field
    }

    public func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        var reader = ByteReader(bytes)
        return [.string(field, try reader.utf8(field))]
    }
}
