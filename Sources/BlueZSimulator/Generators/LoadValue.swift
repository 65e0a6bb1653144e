/// The 20-byte value every load-mode characteristic notifies:
/// device index (uint32), sequence number (uint64) and the send time in nanoseconds since the
/// Unix epoch (uint64, CLOCK_REALTIME), all little-endian.
package struct LoadValue: Sendable, Hashable {
    package static let length = 20

    package var device: UInt32
    package var sequence: UInt64
    package var timestampNanoseconds: UInt64

    package init(device: UInt32, sequence: UInt64, timestampNanoseconds: UInt64) {
        self.device = device
        self.sequence = sequence
        self.timestampNanoseconds = timestampNanoseconds
    }

    package var bytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.length)
        writer.uint32(device)
        writer.uint64(sequence)
        writer.uint64(timestampNanoseconds)
        return writer.bytes
    }

    /// Decodes a notified value; nil when it is not 20 bytes.
    package init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        var reader = ByteReader(bytes)
        guard let device = reader.uint32(), let sequence = reader.uint64(), let time = reader.uint64() else {
            return nil
        }
        self.init(device: device, sequence: sequence, timestampNanoseconds: time)
    }
}
