/// A Bluetooth UUID, always stored as its full 128 bits.
///
/// 16- and 32-bit SIG forms are expanded over the Bluetooth Base UUID
/// (`0000xxxx-0000-1000-8000-00805F9B34FB`), so `BluetoothUUID("180D")` equals
/// `BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb")`.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 128 bits, most significant first.
    public let high: UInt64
    public let low: UInt64

    /// The low 64 bits of the Bluetooth Base UUID.
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The high 64 bits of the Base UUID with the 32-bit field zeroed.
    static let baseHigh: UInt64 = 0x0000_0000_0000_1000

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A SIG-assigned 16-bit UUID such as `0x180D`.
    public init(_ short: UInt16) {
        self.init(UInt32(short))
    }

    /// A SIG-assigned 32-bit UUID.
    public init(_ value: UInt32) {
        self.high = (UInt64(value) << 32) | Self.baseHigh
        self.low = Self.baseLow
    }

    /// Parses `180D`, `0x180d`, `0000180D` or the 36-character 8-4-4-4-12 form, case-insensitively.
    public init?(_ text: String) {
        // The form BlueZ sends, once for each UUID of every signal: read in place (the general
        // parse below splits and joins strings).
        if let (high, low) = Self.parseCanonical(text) {
            self.init(high: high, low: low)
            return
        }
        var hex = Substring(text)
        if hex.hasPrefix("0x") || hex.hasPrefix("0X") { hex = hex.dropFirst(2) }
        switch hex.count {
        case 4, 8:
            guard let value = UInt32(hex, radix: 16), hex.allSatisfy(\.isHexDigit) else { return nil }
            self.init(value)
        case 36:
            let parts = hex.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
            let digits = parts.joined()
            guard digits.allSatisfy(\.isHexDigit),
                let high = UInt64(digits.prefix(16), radix: 16),
                let low = UInt64(digits.suffix(16), radix: 16)
            else { return nil }
            self.init(high: high, low: low)
        case 32:
            guard hex.allSatisfy(\.isHexDigit),
                let high = UInt64(hex.prefix(16), radix: 16),
                let low = UInt64(hex.suffix(16), radix: 16)
            else { return nil }
            self.init(high: high, low: low)
        default:
            return nil
        }
    }

    /// True when this UUID lies on the Bluetooth Base UUID (a 16- or 32-bit SIG form).
    public var isSIGAssigned: Bool {
        low == Self.baseLow && (high & 0xFFFF_FFFF) == Self.baseHigh
    }

    /// The 16-bit form when this is a 16-bit SIG UUID.
    public var shortValue: UInt16? {
        guard isSIGAssigned, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit form when this is a SIG UUID.
    public var value32: UInt32? {
        guard isSIGAssigned else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The lowercase 36-character form BlueZ uses, e.g. `0000180d-0000-1000-8000-00805f9b34fb`.
    public var uuidString: String {
        let h = Self.hex(high, width: 16)
        let l = Self.hex(low, width: 16)
        let hc = Array(h)
        let lc = Array(l)
        return String(hc[0..<8]) + "-" + String(hc[8..<12]) + "-" + String(hc[12..<16]) + "-"
            + String(lc[0..<4]) + "-" + String(lc[4..<16])
    }

    /// The shortest form: `180d` for 16-bit SIG UUIDs, `uuidString` otherwise.
    public var shortString: String {
        if let short = shortValue { return Self.hex(UInt64(short), width: 4) }
        if let value = value32 { return Self.hex(UInt64(value), width: 8) }
        return uuidString
    }

    public var description: String { shortString }

    /// The 16 bytes in the little-endian order used on air (advertising data, ATT).
    public var littleEndianBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: low >> UInt64(shift))) }
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: high >> UInt64(shift))) }
        return bytes
    }

    /// Builds a UUID from 2, 4 or 16 little-endian bytes as found on air.
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        let array = Array(bytes)
        switch array.count {
        case 2: self.init(UInt16(array[0]) | UInt16(array[1]) << 8)
        case 4:
            self.init(UInt32(array[0]) | UInt32(array[1]) << 8 | UInt32(array[2]) << 16 | UInt32(array[3]) << 24)
        case 16:
            var low: UInt64 = 0
            var high: UInt64 = 0
            for index in 0..<8 { low |= UInt64(array[index]) << UInt64(index * 8) }
            for index in 0..<8 { high |= UInt64(array[8 + index]) << UInt64(index * 8) }
            self.init(high: high, low: low)
        default: return nil
        }
    }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in ASCII hex digits, either case; nil for anything else
    /// (which the general parse then judges).
    private static func parseCanonical(_ text: String) -> (UInt64, UInt64)? {
        var text = text
        return text.withUTF8 { utf8 -> (UInt64, UInt64)? in
            guard utf8.count == 36 else { return nil }
            var words: (UInt64, UInt64) = (0, 0)
            var digits = 0
            for (index, byte) in utf8.enumerated() {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    continue
                }
                guard let value = Hex.value(ofDigit: byte) else { return nil }
                if digits < 16 {
                    words.0 = words.0 << 4 | UInt64(value)
                } else {
                    words.1 = words.1 << 4 | UInt64(value)
                }
                digits += 1
            }
            return words
        }
    }

    static func hex(_ value: UInt64, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
