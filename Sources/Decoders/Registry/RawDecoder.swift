import Bluetooth

/// The fallback for values no decoder knows: the bytes as lowercase hex in `raw_hex`.
package struct RawDecoder: ValueDecoder {
    package let name = "raw"

    package init() {}

    package func decode(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedField] {
        [.string("raw_hex", Hex.string(bytes))]
    }
}
