extension AdvertisementContext {
    /// The bind key and the address an encrypted format needs, or the typed error naming the one
    /// that is missing.
    func encryptionInputs() throws(DecoderError) -> (key: [UInt8], address: [UInt8]) {
        try encryptionInputs(frameAddress: nil)
    }

    /// As ``encryptionInputs()``, with the address the frame itself carries (when it does)
    /// taking the advertiser's place.
    func encryptionInputs(frameAddress: [UInt8]?) throws(DecoderError) -> (key: [UInt8], address: [UInt8]) {
        guard let bindKey else {
            throw DecoderError(
                .missingKey, field: "bind_key", offset: 0, message: "the payload is encrypted; configure the bind key")
        }
        guard let address = frameAddress ?? address?.bytes else {
            throw DecoderError(.missingKey, field: "address", offset: 0, message: "decryption needs the device address")
        }
        return (bindKey, address)
    }
}
