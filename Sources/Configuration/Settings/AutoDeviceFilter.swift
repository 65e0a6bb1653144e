import Bluetooth

/// One of `auto_devices.allow` and `auto_devices.deny`: decoders, addresses (whole, or a prefix
/// of 1–5 bytes such as the manufacturer's OUI `"A4:C1:38"`) and advertised names (exact, or a
/// prefix ending in `*`: `"ATC_*"`). Empty lists say nothing.
package struct AutoDeviceFilter: Sendable, Equatable {
    package var decoders: [String]
    /// Address prefixes (6 bytes: one address), most significant byte first.
    package var addresses: [[UInt8]]
    package var names: [String]

    package init(decoders: [String] = [], addresses: [[UInt8]] = [], names: [String] = []) {
        self.decoders = decoders
        self.addresses = addresses
        self.names = names
    }

    package var isEmpty: Bool { decoders.isEmpty && addresses.isEmpty && names.isEmpty }

    /// The first list (`"decoders"`, `"addresses"`, `"names"`) with an entry that catches the
    /// advertiser; a name that is not known (nil) is caught by no entry.
    package func catches(decoder: String, address: BluetoothAddress, name: String?) -> String? {
        if decoders.contains(decoder) { return "decoders" }
        if addresses.contains(where: { address.bytes.starts(with: $0) }) { return "addresses" }
        if let name, names.contains(where: { Self.name(name, matches: $0) }) { return "names" }
        return nil
    }

    /// The first non-empty list in which no entry catches the advertiser (for `allow`: each
    /// non-empty list must have one that does).
    package func misses(decoder: String, address: BluetoothAddress, name: String?) -> String? {
        if !decoders.isEmpty, !decoders.contains(decoder) { return "decoders" }
        if !addresses.isEmpty, !addresses.contains(where: { address.bytes.starts(with: $0) }) { return "addresses" }
        if !names.isEmpty, !(name.map { text in names.contains { Self.name(text, matches: $0) } } ?? false) {
            return "names"
        }
        return nil
    }

    /// `pattern` is the name itself, or a prefix of it followed by `*`.
    static func name(_ name: String, matches pattern: String) -> Bool {
        pattern.hasSuffix("*") ? name.hasPrefix(pattern.dropLast()) : name == pattern
    }

    /// Parses `"A4:C1:38"` or `"A4:C1:38:CF:01:56"` (or with `-`): 1 to 6 bytes.
    package static func addressPrefix(_ text: String) -> [UInt8]? {
        let separators = Set(text.filter { $0 == ":" || $0 == "-" })
        guard separators.count <= 1 else { return nil }
        let parts = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "-" })
        guard (1...6).contains(parts.count) else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// `A4:C1:38` for a prefix, the uppercase address for six bytes.
    package static func format(prefix: [UInt8]) -> String {
        prefix.map { Hex.string([$0]).uppercased() }.joined(separator: ":")
    }

    /// `decoders bthome, pvvx; addresses A4:C1:38; names ATC_*` for `check-config`.
    package var summary: String {
        [
            ("decoders", decoders), ("addresses", addresses.map { Self.format(prefix: $0) }), ("names", names),
        ].filter { !$0.1.isEmpty }.map { "\($0.0) \($0.1.joined(separator: ", "))" }.joined(separator: "; ")
    }

    static let keys = ["decoders", "addresses", "names"]
}

extension AutoDeviceFilter: Decodable {
    package init(from decoder: any Decoder) throws {
        let reader = try ObjectReader(decoder, keys: Self.keys)
        decoders = try reader.decoderNames("decoders")
        let addressForm = "an address \"AA:BB:CC:DD:EE:FF\" or a prefix of 1 to 5 bytes such as \"A4:C1:38\""
        addresses = []
        for (index, text) in try reader.distinctStrings("addresses", expected: addressForm).enumerated() {
            guard let prefix = Self.addressPrefix(text) else {
                throw ConfigurationError(
                    code: .invalidValue, keyPath: reader.keyPath("addresses") + "[\(index)]",
                    message: "\"\(text)\" is not \(addressForm)")
            }
            addresses.append(prefix)
        }
        names = try reader.distinctStrings("names", expected: "a name, or a prefix followed by * (\"ATC_*\")")
    }
}

extension ObjectReader {
    /// A list of distinct non-empty strings (absent: empty).
    func distinctStrings(_ key: String, expected: String) throws -> [String] {
        let texts = try decode([String].self, key, expected: "a list of \(expected)", elementExpected: expected) ?? []
        for (index, text) in texts.enumerated() {
            guard !text.isEmpty else {
                throw ConfigurationError(
                    code: .invalidValue, keyPath: keyPath(key) + "[\(index)]", message: "empty; expected \(expected)")
            }
            guard !texts[..<index].contains(text) else {
                throw ConfigurationError(
                    code: .duplicate, keyPath: keyPath(key) + "[\(index)]", message: "\"\(text)\" is listed twice")
            }
        }
        return texts
    }
}
