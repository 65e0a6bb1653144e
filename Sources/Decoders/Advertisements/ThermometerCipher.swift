import Bluetooth

/// The encryption of the ATC1441 and pvvx custom-firmware formats (service data 0x181A, as
/// `atc-ble` and the firmware implement it): the payload is `counter (1), ciphertext, MIC (4)`,
/// AES-128-CCM with the device's bind key, associated data `0x11`, and the nonce
/// `address (6, least significant byte first) · payload length + 3 · 16 1a 18 · counter`.
enum ThermometerCipher {
    static func open(_ payload: [UInt8], context: AdvertisementContext) throws(DecoderError) -> (
        counter: UInt8, plaintext: [UInt8]
    ) {
        let (key, address) = try context.encryptionInputs()
        var reader = ByteReader(payload)
        let counter = try reader.uint8("counter")
        guard reader.remaining >= 4 else {
            throw DecoderError(
                .truncated, field: "mic", offset: reader.offset, message: "needs a 4-byte MIC, \(reader.remaining) left"
            )
        }
        let ciphertext = try reader.bytes(reader.remaining - 4, "encrypted_payload")
        let mic = try reader.bytes(4, "mic")
        let nonce = address.reversed() + [UInt8(truncatingIfNeeded: payload.count + 3), 0x16, 0x1A, 0x18, counter]
        let plaintext = try AESCCM.open(
            ciphertext: ciphertext, tag: mic, key: key, nonce: nonce, associatedData: [0x11])
        return (counter, plaintext)
    }
}
