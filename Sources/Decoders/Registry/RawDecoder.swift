import Bluetooth

/// The fallback for values no decoder knows: the bytes as lowercase hex in `raw_hex`.
public struct RawDecoder: ValueDecoder {
    public let name = "raw"

    public init() {}

    public func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        [.string("raw_hex", Hex.string(bytes))]
    }
}
