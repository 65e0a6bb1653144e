/// Reads bit fields packed least-significant bit first, from the first byte on (Victron's
/// Instant Readout records): a field of n bits takes the next n bits, its lowest bit first.
struct LSBFirstBitReader {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next `width` bits (1–64) as an unsigned number.
    mutating func unsigned(_ width: Int, _ field: String) throws(DecoderError) -> UInt64 {
        guard position + width <= bytes.count * 8 else {
            throw DecoderError(
                .truncated, field: field, offset: position / 8,
                message: "needs \(width) bits at bit \(position); the record has \(bytes.count * 8)")
        }
        var value: UInt64 = 0
        for index in 0..<width {
            let bit = position + index
            value |= UInt64(bytes[bit / 8] >> UInt8(bit % 8) & 1) << UInt64(index)
        }
        position += width
        return value
    }

    /// The next `width` bits as a two's-complement number, with the raw bits (for the "not
    /// available" patterns, which are defined on the bits).
    mutating func signed(_ width: Int, _ field: String) throws(DecoderError) -> (value: Int64, raw: UInt64) {
        let raw = try unsigned(width, field)
        let sign: UInt64 = 1 << UInt64(width - 1)
        let value = raw & sign == 0 ? Int64(raw) : Int64(raw) - Int64(bitPattern: sign << 1)
        return (value, raw)
    }
}
