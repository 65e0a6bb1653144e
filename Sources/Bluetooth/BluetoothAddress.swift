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
        let separators = Set(text.filter { $0 == ":" || $0 == "-" })
        guard separators.count <= 1 else { return nil }
        let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy({ $0.isHexDigit }), let byte = UInt8(part, radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self.init(bytes: bytes, type: type)
    }

    /// `AA:BB:CC:DD:EE:FF`, uppercase as BlueZ prints it.
    public var string: String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
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
