import Bluetooth
import Foundation
import JSON

extension KeyedDecodingContainer {
    /// Decodes a value that must satisfy `parse`, reporting `accepted` with the key path otherwise.
    func decodeParsed<Raw: Decodable, Value>(
        _ raw: Raw.Type, forKey key: Key, accepted: String, _ parse: (Raw) -> Value?
    ) throws -> Value {
        let rawValue = try decode(Raw.self, forKey: key)
        guard let value = parse(rawValue) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "invalid value \(rawValue); expected \(accepted)")
        }
        return value
    }

    func decodeParsedIfPresent<Raw: Decodable, Value>(
        _ raw: Raw.Type, forKey key: Key, accepted: String, _ parse: (Raw) -> Value?
    ) throws -> Value? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeParsed(raw, forKey: key, accepted: accepted, parse)
    }

    /// A UUID: `"180d"`, `"0x2a37"` or the 128-bit form.
    func decodeUUID(forKey key: Key) throws -> BluetoothUUID {
        try decodeParsed(String.self, forKey: key, accepted: ScenarioParsing.uuidForm, ScenarioParsing.uuid)
    }

    func decodeUUIDIfPresent(forKey key: Key) throws -> BluetoothUUID? {
        try decodeParsedIfPresent(String.self, forKey: key, accepted: ScenarioParsing.uuidForm, ScenarioParsing.uuid)
    }

    /// Hex bytes (`"0a1b"`, spaces and `:` allowed).
    func decodeHexIfPresent(forKey key: Key) throws -> [UInt8]? {
        try decodeParsedIfPresent(String.self, forKey: key, accepted: ScenarioParsing.hexForm, ScenarioParsing.hex)
    }

    func invalid(_ key: Key, _ message: String) -> DecodingError {
        DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: message)
    }
}
