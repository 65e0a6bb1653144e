/// A cursor over a byte value. Every read names the field it reads, so an underrun becomes a
/// ``DecoderError`` that says which field was missing and where.
package struct ByteReader: Sendable {
    package let bytes: [UInt8]
    package private(set) var offset: Int = 0

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    package var remaining: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset >= bytes.count }

    // MARK: Integers

    /// An unsigned integer of `width` bytes (1…8).
    package mutating func unsigned(_ width: Int, bigEndian: Bool = false, _ field: String) throws(DecoderError)
        -> UInt64
    {
        let slice = try take(width, field)
        var value: UInt64 = 0
        if bigEndian {
            for byte in slice { value = value << 8 | UInt64(byte) }
        } else {
            for byte in slice.reversed() { value = value << 8 | UInt64(byte) }
        }
        return value
    }

    /// A two's-complement signed integer of `width` bytes (1…8).
    package mutating func signed(_ width: Int, bigEndian: Bool = false, _ field: String) throws(DecoderError)
        -> Int64
    {
        let raw = try unsigned(width, bigEndian: bigEndian, field)
        let shift = UInt64(64 - 8 * width)
        return Int64(bitPattern: raw << shift) >> Int64(shift)
    }

    package mutating func uint8(_ field: String) throws(DecoderError) -> UInt8 {
        UInt8(try unsigned(1, field))
    }

    package mutating func int8(_ field: String) throws(DecoderError) -> Int8 {
        Int8(try signed(1, field))
    }

    package mutating func uint16(_ field: String) throws(DecoderError) -> UInt16 {
        UInt16(try unsigned(2, field))
    }

    package mutating func int16(_ field: String) throws(DecoderError) -> Int16 {
        Int16(try signed(2, field))
    }

    package mutating func uint24(_ field: String) throws(DecoderError) -> UInt32 {
        UInt32(try unsigned(3, field))
    }

    package mutating func int24(_ field: String) throws(DecoderError) -> Int32 {
        Int32(try signed(3, field))
    }

    package mutating func uint32(_ field: String) throws(DecoderError) -> UInt32 {
        UInt32(try unsigned(4, field))
    }

    package mutating func int32(_ field: String) throws(DecoderError) -> Int32 {
        Int32(try signed(4, field))
    }

    package mutating func uint48(_ field: String) throws(DecoderError) -> UInt64 {
        try unsigned(6, field)
    }

    package mutating func uint64(_ field: String) throws(DecoderError) -> UInt64 {
        try unsigned(8, field)
    }

    package mutating func int64(_ field: String) throws(DecoderError) -> Int64 {
        try signed(8, field)
    }

    package mutating func uint16BE(_ field: String) throws(DecoderError) -> UInt16 {
        UInt16(try unsigned(2, bigEndian: true, field))
    }

    package mutating func int16BE(_ field: String) throws(DecoderError) -> Int16 {
        Int16(try signed(2, bigEndian: true, field))
    }

    package mutating func uint32BE(_ field: String) throws(DecoderError) -> UInt32 {
        UInt32(try unsigned(4, bigEndian: true, field))
    }

    // MARK: Floating point

    /// IEEE 11073 16-bit SFLOAT.
    package mutating func sfloat(_ field: String) throws(DecoderError) -> MedicalFloat {
        MedicalFloat(sfloat: try uint16(field))
    }

    /// IEEE 11073 32-bit FLOAT.
    package mutating func medicalFloat(_ field: String) throws(DecoderError) -> MedicalFloat {
        MedicalFloat(float: try uint32(field))
    }

    /// IEEE 754 binary32.
    package mutating func float32(bigEndian: Bool = false, _ field: String) throws(DecoderError) -> Float {
        Float(bitPattern: UInt32(try unsigned(4, bigEndian: bigEndian, field)))
    }

    // MARK: Bytes and strings

    package mutating func bytes(_ count: Int, _ field: String) throws(DecoderError) -> [UInt8] {
        Array(try take(count, field))
    }

    /// Steps over `count` bytes (padding, reserved fields) without copying them.
    ///
    /// `_ = try bytes(count, field)` did the same with a copy the caller threw away; built with
    /// `-O -sanitize=address` (the `fuzz-byte-layouts` harness), AddressSanitizer reported a
    /// heap-use-after-free in that copy (the discarded array freed before the copy into it), on
    /// the first seed with a `skip` field. No copy, no discarded array.
    package mutating func skip(_ count: Int, _ field: String) throws(DecoderError) {
        _ = try take(count, field).count
    }

    /// Everything not read yet.
    package mutating func rest() -> [UInt8] {
        let slice = bytes[offset...]
        offset = bytes.count
        return Array(slice)
    }

    /// `count` bytes of UTF-8 (or everything left when `count` is nil). Trailing NULs, which
    /// devices use as padding, are dropped.
    package mutating func utf8(count: Int? = nil, _ field: String) throws(DecoderError) -> String {
        let start = offset
        let raw: ArraySlice<UInt8>
        if let count {
            raw = try take(count, field)
        } else {
            raw = ArraySlice(rest())
        }
        var trimmed = raw[...]
        while let last = trimmed.last, last == 0 { trimmed = trimmed.dropLast() }
        guard let string = String(validating: trimmed, as: UTF8.self) else {
            throw DecoderError(.invalidValue, field: field, offset: start, message: "not valid UTF-8")
        }
        return string
    }

    /// Throws `trailingBytes` unless every byte was read.
    package func expectEnd(_ field: String) throws(DecoderError) {
        guard isAtEnd else {
            throw DecoderError(
                .trailingBytes, field: field, offset: offset,
                message: "\(remaining) byte(s) left after the last field")
        }
    }

    private mutating func take(_ count: Int, _ field: String) throws(DecoderError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw DecoderError(
                .truncated, field: field, offset: offset,
                message: "needs \(count) byte(s), \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }
}
