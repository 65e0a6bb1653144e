/// The send time of each load device's recent values (`GetLoadSendTimes`): a consumer that lost a
/// value learns exactly when it was sent, e.g. to judge it against the moment of a fault (the fault
/// campaign's SIGKILL bound), which its neighbours' times give only to within a period.
struct LoadSendTimes: Sendable, Equatable {
    /// Values kept per device, at least half of it after a trim: at 50 values/s more than 2.5 minutes.
    static let capacity = 16_384

    /// The sequence of the first kept time, per device.
    private(set) var first: [UInt64]
    /// Send times in nanoseconds since the Unix epoch, per device, sequences `first`, `first + 1`, …
    private(set) var times: [[UInt64]]

    /// No value kept yet; each device's next value has the sequence after `sequences[device]`.
    init(after sequences: [UInt64]) {
        first = sequences.map { $0 + 1 }
        times = Array(repeating: [], count: sequences.count)
    }

    /// Records that `device` sent its next value at `nanoseconds`; the oldest half goes when full.
    mutating func record(device: Int, nanoseconds: UInt64) {
        if times[device].count == Self.capacity {
            times[device].removeFirst(Self.capacity / 2)
            first[device] += UInt64(Self.capacity / 2)
        }
        times[device].append(nanoseconds)
    }

    /// The kept send times of `device` (by index) and the sequence of the first; empty for an unknown device.
    func of(device: Int) -> (first: UInt64, times: [UInt64]) {
        times.indices.contains(device) ? (first[device], times[device]) : (0, [])
    }
}
