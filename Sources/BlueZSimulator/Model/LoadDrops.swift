/// The load values each device numbered but could not hand over because the client's notify
/// socket was full: bluetoothd drops a notification there (its `io_send` fails with `EAGAIN`), so a
/// consumer that falls behind loses values before it ever reads them. Kept as ranges of sequences,
/// so a consumer can tell a value it lost itself from one the "radio" dropped (`GetLoadStatistics`'s
/// `dropped`, ``BlueZSimulator/loadDroppedSequences(device:)``).
struct LoadDrops: Sendable, Equatable {
    /// Ranges kept per device: a stalled reader makes one range per stall, so this covers hours of
    /// stalls; beyond it the oldest go (``count`` stays exact).
    static let capacity = 4096

    /// Values dropped per device since load mode started.
    private(set) var count: [UInt64]
    /// The dropped sequences per device, oldest first, adjacent ones merged.
    private(set) var ranges: [[ClosedRange<UInt64>]]

    init(devices: Int) {
        count = Array(repeating: 0, count: devices)
        ranges = Array(repeating: [], count: devices)
    }

    /// Records that `device` dropped the value numbered `sequence` (sequences only increase).
    mutating func record(device: Int, sequence: UInt64) {
        count[device] += 1
        if let last = ranges[device].last, last.upperBound + 1 == sequence {
            ranges[device][ranges[device].count - 1] = last.lowerBound...sequence
            return
        }
        if ranges[device].count == Self.capacity { ranges[device].removeFirst(Self.capacity / 2) }
        ranges[device].append(sequence...sequence)
    }

    /// The kept ranges of `device` (by index); empty for an unknown device.
    func of(device: Int) -> [ClosedRange<UInt64>] {
        ranges.indices.contains(device) ? ranges[device] : []
    }
}
