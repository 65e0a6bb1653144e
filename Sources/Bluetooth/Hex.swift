/// Hex text to and from bytes (`"0x16 48"`, `"16:48"`, `"1648"`).
package enum Hex {
    /// Lowercase hex digits, two per byte, `separator` between bytes. Built as UTF-8 bytes in one
    /// buffer: it runs for every raw reading on the notification thread.
    package static func string(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        // Called from other modules this generic function is not specialised: iterating the
        // sequence cost a witness call per byte (~5 µs for a 20-byte value, issue 20), so
        // contiguous bytes ([UInt8], Data) are read through one buffer pointer.
        if separator.isEmpty, let text = bytes.withContiguousStorageIfAvailable({ plain($0) }) { return text }
        let separatorBytes = Array(separator.utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * (2 + separatorBytes.count))
        for byte in bytes {
            if !text.isEmpty { text += separatorBytes }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The value of one ASCII hex digit (either case), nil for any other byte: for parsers that
    /// read UTF-8 in place (addresses, UUIDs).
    package static func value(ofDigit digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Two lowercase digits per byte, no separator.
    private static func plain(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            var index = 0
            for byte in bytes {
                text[index] = digits[Int(byte >> 4)]
                text[index + 1] = digits[Int(byte & 0xF)]
                index += 2
            }
            return index
        }
    }

    /// Parses hex digits, ignoring an optional `0x` prefix and the separators space, `:` and `-`.
    /// Returns nil for odd digit counts or non-hex characters.
    package static func bytes(_ text: String) -> [UInt8]? {
        var body = Substring(text.trimmingWhitespace())
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        var values: [UInt8] = []
        var high: UInt8?
        for character in body {
            if character == " " || character == ":" || character == "-" { continue }
            guard let nibble = character.hexDigitValue else { return nil }
            if let pending = high {
                values.append(pending << 4 | UInt8(nibble))
                high = nil
            } else {
                high = UInt8(nibble)
            }
        }
        return high == nil ? values : nil
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return slice
    }
}
