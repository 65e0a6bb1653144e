extension JSONValue {
    /// Compact JSON text, keys in order.
    public var serialized: String { String(decoding: bytes, as: UTF8.self) }

    /// The UTF-8 bytes of `serialized`, ready to publish. Written as bytes: a string is copied in
    /// runs between the bytes it escapes (appending scalar by scalar to a `String` cost ~0.2 µs a
    /// scalar, issue 19).
    public var bytes: [UInt8] {
        var output: [UInt8] = []
        // A reading's state payload is ~100 bytes: one allocation instead of growing from empty.
        output.reserveCapacity(128)
        write(to: &output)
        return output
    }

    /// Appends the value's compact JSON text (as ``bytes`` has it) to `output`: for payloads built
    /// around values, without a `JSONValue` for the whole.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): output.append(contentsOf: Self.format(value).utf8)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Shortest round-tripping form; whole numbers without a fraction; non-finite as null.
    public static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `value` in quotes with `"`, `\` and the C0 controls escaped (`\n`, `\r`, `\t`, else
    /// `\u00XX`); every other byte as is. All escaped bytes are ASCII, so no multi-byte scalar is cut.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var run = 0
            var offset = 0
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<offset - 1]))
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case UInt8(ascii: "\n"): output.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): output.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): output.append(UInt8(ascii: "t"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: "u00".utf8)
                    output.append(contentsOf: [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                }
                run = offset
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        output.append(UInt8(ascii: "\""))
    }
}
