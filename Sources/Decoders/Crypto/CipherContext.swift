internal import CCrypto

/// An OpenSSL `EVP_CIPHER_CTX` that frees itself.
final class CipherContext {
    let handle: OpaquePointer

    init() throws(DecoderError) {
        guard let handle = EVP_CIPHER_CTX_new() else {
            throw DecoderError(
                .decryptionFailed, field: "cipher", message: "OpenSSL could not allocate a cipher context")
        }
        self.handle = handle
    }

    deinit { EVP_CIPHER_CTX_free(handle) }

    /// The error funnel for libcrypto: EVP calls return 1 on success.
    func check(_ result: Int32, _ step: String) throws(DecoderError) {
        guard result == 1 else {
            let code = ERR_get_error()
            ERR_clear_error()
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw DecoderError(.decryptionFailed, field: "cipher", message: "OpenSSL \(step) failed: \(text)")
        }
    }
}
