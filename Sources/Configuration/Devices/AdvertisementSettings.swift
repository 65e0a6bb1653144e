import Bluetooth

/// `devices[].advertisement`: decode what the device advertises (no connection needed).
public struct AdvertisementSettings: Sendable, Equatable {
    /// Decoder name, e.g. `bthome`, `ibeacon`.
    public var decoder: String
    /// AES key for encrypted advertisements (BTHome v2), 16 bytes.
    public var bindKey: [UInt8]?

    public init(decoder: String, bindKey: [UInt8]? = nil) {
        self.decoder = decoder
        self.bindKey = bindKey
    }

    static let keys = ["decoder", "bind_key"]
}

extension AdvertisementSettings: Decodable {
    public init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        self.decoder = try reader.required(
            try reader.decoderName("decoder"), "decoder", accepted: "a decoder name such as \"bthome\"")
        let keyAccepted = "32 hex digits (the 16-byte key)"
        if let text = try reader.string("bind_key", expected: keyAccepted) {
            guard text.count == 32, let bytes = Hex.bytes(text) else {
                throw reader.error("bind_key", .invalidValue, "not a key; expected \(keyAccepted)")
            }
            bindKey = bytes
        }
    }
}
