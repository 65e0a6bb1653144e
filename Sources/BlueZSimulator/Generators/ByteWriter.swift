/// Appends little-endian (and, where a format says so, big-endian) fields to a byte buffer.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 20) { bytes.reserveCapacity(capacity) }

    mutating func uint8(_ value: UInt8) { bytes.append(value) }
    mutating func int8(_ value: Int8) { bytes.append(UInt8(bitPattern: value)) }
    mutating func uint16(_ value: UInt16) { littleEndian(UInt64(value), count: 2) }
    mutating func int16(_ value: Int16) { uint16(UInt16(bitPattern: value)) }
    mutating func uint32(_ value: UInt32) { littleEndian(UInt64(value), count: 4) }
    mutating func uint64(_ value: UInt64) { littleEndian(value, count: 8) }
    mutating func uint16BigEndian(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// IEEE-11073 32-bit FLOAT: 8-bit signed exponent, 24-bit signed mantissa (value = mantissa × 10^exponent).
    mutating func ieee11073Float(_ value: Double, exponent: Int8 = -2) {
        var scale = 1.0
        for _ in 0..<Int(-exponent) { scale *= 10 }
        let mantissa = Int32((value * scale).rounded())
        let packed = (UInt32(UInt8(bitPattern: exponent)) << 24) | (UInt32(bitPattern: mantissa) & 0x00FF_FFFF)
        uint32(packed)
    }

    private mutating func littleEndian(_ value: UInt64, count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(index * 8))) }
    }
}

/// Reads little-endian fields from bytes through a cursor (used to decode load-mode values).
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func uint32() -> UInt32? { littleEndian(count: 4).map { UInt32(truncatingIfNeeded: $0) } }
    mutating func uint64() -> UInt64? { littleEndian(count: 8) }

    private mutating func littleEndian(count: Int) -> UInt64? {
        guard remaining >= count else { return nil }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << UInt64(index * 8) }
        offset += count
        return value
    }
}
