/// A 48-bit Bluetooth device address (`AA:BB:CC:DD:EE:FF`) with its LE address type.
public struct BluetoothAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// LE address types as BlueZ names them in `Device1.AddressType`.
    public enum AddressType: String, Hashable, Sendable, CaseIterable {
        case `public`
        case random
    }

    /// The six bytes, most significant (as printed) first.
    public let bytes: [UInt8]
    public var type: AddressType

    public init?(bytes: [UInt8], type: AddressType = .public) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
        self.type = type
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (or all with `-`), case-insensitively; mixed separators
    /// (`C0-FF:EE-00:00-01`) are refused.
    public init?(_ text: String, type: AddressType = .public) {
        // Every address BlueZ reports goes through here (each advertisement's signal names its
        // device): read the 17 UTF-8 bytes in place instead of splitting the string.
        var text = text
        let parsed = text.withUTF8 { utf8 -> [UInt8]? in
            guard utf8.count == 17 else { return nil }
            let separator = utf8[2]
            guard separator == UInt8(ascii: ":") || separator == UInt8(ascii: "-") else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(6)
            for part in 0..<6 {
                let at = part * 3
                if part > 0, utf8[at - 1] != separator { return nil }
                guard let high = Hex.value(ofDigit: utf8[at]), let low = Hex.value(ofDigit: utf8[at + 1]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            }
            return bytes
        }
        guard let parsed else { return nil }
        self.init(bytes: parsed, type: type)
    }

    /// `AA:BB:CC:DD:EE:FF`, uppercase as BlueZ prints it.
    public var string: String {
        // Written into one buffer: the gateway prints it for every advertisement it publishes.
        String(unsafeUninitializedCapacity: 17) { buffer in
            let digits: StaticString = "0123456789ABCDEF"
            digits.withUTF8Buffer { digits in
                for (index, byte) in bytes.enumerated() {
                    if index > 0 { buffer[index * 3 - 1] = UInt8(ascii: ":") }
                    buffer[index * 3] = digits[Int(byte >> 4)]
                    buffer[index * 3 + 1] = digits[Int(byte & 0x0F)]
                }
            }
            return 17
        }
    }

    public var description: String { string }

    /// BlueZ's object path component: `dev_AA_BB_CC_DD_EE_FF`.
    public var bluezPathComponent: String {
        "dev_" + string.split(separator: ":").joined(separator: "_")
    }

    /// For random addresses: static, resolvable private or non-resolvable private, from the two top bits.
    public var randomSubtype: RandomSubtype? {
        guard type == .random else { return nil }
        switch bytes[0] >> 6 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return nil
        }
    }

    public enum RandomSubtype: Sendable, Hashable {
        case staticAddress, resolvablePrivate, nonResolvablePrivate
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
