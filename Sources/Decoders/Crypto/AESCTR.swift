internal import CCrypto

/// AES-128 in counter mode (NIST SP 800-38A) through OpenSSL's libcrypto (EVP), as Victron's
/// Instant Readout encrypts its records: no authentication, so a wrong key is not detected here
/// (Victron's frames carry the key's first byte for that; ``VictronDecoder`` checks it). The
/// counter block is incremented as one big-endian 128-bit number after each 16-byte block.
/// Every OpenSSL failure goes through ``CipherContext/check(_:_:)``.
package enum AESCTR {
    /// Encrypts or decrypts (the same operation in counter mode) `data` with a 16-byte key, from
    /// the 16-byte initial counter block.
    package static func apply(_ data: [UInt8], key: [UInt8], counter: [UInt8]) throws(DecoderError) -> [UInt8] {
        guard key.count == 16 else {
            throw DecoderError(
                .missingKey, field: "bind_key", message: "needs 16 bytes (32 hex digits), got \(key.count)")
        }
        guard counter.count == 16 else {
            throw DecoderError(
                .invalidInput, field: "counter", message: "CTR needs a 16-byte counter block, got \(counter.count)")
        }
        guard !data.isEmpty else { return [] }
        let context = try CipherContext()
        try context.check(
            EVP_EncryptInit_ex(context.handle, EVP_aes_128_ctr(), nil, key, counter), "EVP_EncryptInit_ex")
        var output = [UInt8](repeating: 0, count: data.count)
        var length: Int32 = 0
        try context.check(EVP_EncryptUpdate(context.handle, &output, &length, data, Int32(data.count)), "encrypt")
        // A stream mode: everything came out of the update, the final call adds nothing.
        var tail = [UInt8](repeating: 0, count: 16)
        var final: Int32 = 0
        try context.check(EVP_EncryptFinal_ex(context.handle, &tail, &final), "finish")
        return Array(output.prefix(Int(length) + Int(final)))
    }
}
