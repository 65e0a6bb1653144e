/// An AES-CCM sealed advertisement tail as BTHome v1/v2 and MiBeacon v4/v5 lay it out.
struct SealedTail {
    var ciphertext: [UInt8]
    /// The counter as sent (part of the nonce) and its little-endian value.
    var counterBytes: [UInt8]
    var counter: UInt32
    var mic: [UInt8]
}

extension ByteReader {
    /// Everything left, read as `ciphertext, counter (counterWidth bytes, little-endian), MIC (4)`.
    mutating func sealedTail(counterWidth: Int) throws(DecoderError) -> SealedTail {
        guard remaining >= counterWidth + 4 else {
            throw DecoderError(
                .truncated, field: "encrypted_payload", offset: offset,
                message: "needs a \(counterWidth)-byte counter and a 4-byte MIC, \(remaining) byte(s) left")
        }
        let ciphertext = try bytes(remaining - counterWidth - 4, "encrypted_payload")
        let counterBytes = try bytes(counterWidth, "counter")
        let mic = try bytes(4, "mic")
        var counterReader = ByteReader(counterBytes)
        let counter = UInt32(try counterReader.unsigned(counterWidth, "counter"))
        return SealedTail(ciphertext: ciphertext, counterBytes: counterBytes, counter: counter, mic: mic)
    }
}
