internal import CCrypto

/// AES-128-CCM through OpenSSL's libcrypto (EVP), as BTHome encryption uses it: 13-byte nonce
/// (12 in BTHome v1), 4-byte tag, associated data only in v1 (one byte, 0x11). With ``AESCTR``
/// the only code in the decoders that calls libcrypto; every OpenSSL failure goes through
/// ``CipherContext/check(_:_:)``.
public enum AESCCM {
    /// Decrypts and authenticates. Throws `decryptionFailed` when the tag does not match.
    public static func open(
        ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8] = []
    ) throws(DecoderError) -> [UInt8] {
        try validate(key: key, nonce: nonce, tagCount: tag.count)
        let context = try CipherContext()
        try context.check(EVP_DecryptInit_ex(context.handle, EVP_aes_128_ccm(), nil, nil, nil), "EVP_DecryptInit_ex")
        try context.check(
            EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil), "set nonce length")
        var tagCopy = tag
        try context.check(
            EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), &tagCopy), "set tag")
        try context.check(EVP_DecryptInit_ex(context.handle, nil, nil, key, nonce), "set key")
        var length: Int32 = 0
        try context.check(EVP_DecryptUpdate(context.handle, nil, &length, nil, Int32(ciphertext.count)), "set length")
        if !associatedData.isEmpty {
            try context.check(
                EVP_DecryptUpdate(context.handle, nil, &length, associatedData, Int32(associatedData.count)),
                "associated data")
        }
        var output = [UInt8](repeating: 0, count: max(ciphertext.count, 1))
        let result = EVP_DecryptUpdate(context.handle, &output, &length, ciphertext, Int32(ciphertext.count))
        guard result > 0 else {
            ERR_clear_error()
            throw DecoderError(
                .decryptionFailed, field: "encrypted_payload",
                message: "authentication failed: wrong bind key, wrong device address or corrupted data")
        }
        return Array(output.prefix(Int(length)))
    }

    /// Encrypts and returns the ciphertext and the tag (used by tests and simulated advertisers).
    public static func seal(
        plaintext: [UInt8], key: [UInt8], nonce: [UInt8], tagCount: Int = 4, associatedData: [UInt8] = []
    ) throws(DecoderError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try validate(key: key, nonce: nonce, tagCount: tagCount)
        let context = try CipherContext()
        try context.check(EVP_EncryptInit_ex(context.handle, EVP_aes_128_ccm(), nil, nil, nil), "EVP_EncryptInit_ex")
        try context.check(
            EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil), "set nonce length")
        try context.check(
            EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_AEAD_SET_TAG, Int32(tagCount), nil), "set tag length")
        try context.check(EVP_EncryptInit_ex(context.handle, nil, nil, key, nonce), "set key")
        var length: Int32 = 0
        try context.check(EVP_EncryptUpdate(context.handle, nil, &length, nil, Int32(plaintext.count)), "set length")
        if !associatedData.isEmpty {
            try context.check(
                EVP_EncryptUpdate(context.handle, nil, &length, associatedData, Int32(associatedData.count)),
                "associated data")
        }
        var output = [UInt8](repeating: 0, count: max(plaintext.count, 1))
        try context.check(
            EVP_EncryptUpdate(context.handle, &output, &length, plaintext, Int32(plaintext.count)), "encrypt")
        var final: Int32 = 0
        try context.check(EVP_EncryptFinal_ex(context.handle, &output, &final), "finish")
        var tag = [UInt8](repeating: 0, count: tagCount)
        try context.check(EVP_CIPHER_CTX_ctrl(context.handle, EVP_CTRL_AEAD_GET_TAG, Int32(tagCount), &tag), "get tag")
        return (Array(output.prefix(plaintext.count)), tag)
    }

    private static func validate(key: [UInt8], nonce: [UInt8], tagCount: Int) throws(DecoderError) {
        guard key.count == 16 else {
            throw DecoderError(
                .missingKey, field: "bind_key", message: "needs 16 bytes (32 hex digits), got \(key.count)")
        }
        guard (7...13).contains(nonce.count), [4, 6, 8, 10, 12, 14, 16].contains(tagCount) else {
            throw DecoderError(
                .invalidInput, field: "nonce", message: "CCM needs a 7–13 byte nonce and an even tag size")
        }
    }
}
