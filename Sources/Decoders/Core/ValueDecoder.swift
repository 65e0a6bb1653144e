public import Bluetooth

/// Turns the bytes of one value (a characteristic value, a manufacturer-data blob) into fields.
public protocol ValueDecoder: Sendable {
    /// The stable name used in configuration and output (`heart_rate_measurement`).
    var name: String { get }
    func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField]
}

/// A decoder for one standard GATT characteristic.
public protocol CharacteristicDecoder: ValueDecoder {
    var uuid: BluetoothUUID { get }
}

extension ValueDecoder {
    /// Decodes without throwing: on failure the reading carries the error and the raw bytes.
    public func reading(_ bytes: [UInt8]) -> DecodedReading {
        do {
            return DecodedReading(decoder: name, fields: try decode(bytes), raw: bytes)
        } catch {
            return DecodedReading(decoder: name, fields: [], raw: bytes, error: error)
        }
    }
}
