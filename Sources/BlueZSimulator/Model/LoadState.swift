import Timekeeping

/// Load mode's bookkeeping: how many devices notify how often, and how many values went out.
struct LoadState: Sendable {
    var devices = 0
    var rate = 0.0
    var sequences: [UInt64] = []
    /// When each device's recent values were sent (``LoadSendTimes``).
    var sendTimes = LoadSendTimes(after: [])
    /// The values numbered but dropped at a full notify socket (``LoadDrops``).
    var drops = LoadDrops(devices: 0)
    var sent: UInt64 = 0
    var startedAt: ContinuousClock.Instant?
    var stoppedAt: ContinuousClock.Instant?
    var task: Task<Void, Never>?
    /// Identifies the sending task of the current run; a cancelled task's late tick sends nothing.
    var run = 0
}

/// What load mode achieved, for benchmarks (`GetLoadStatistics`).
package struct LoadStatistics: Sendable, Equatable {
    package var devices: Int
    /// Requested notifications per second per device.
    package var rate: Double
    /// Notifications sent since load mode started.
    package var sent: UInt64
    package var elapsed: Duration
    /// The last sequence number each device sent (index = device index), carried across rate
    /// changes like the sequences themselves: a consumer's loss per device is this minus what it received.
    package var lastSequences: [UInt64] = []
    /// Of those, how many each device dropped because the client's notify socket was full (as
    /// bluetoothd does): values the consumer never had a chance to read. The sequences are
    /// ``BlueZSimulator/loadDroppedSequences(device:)``.
    package var droppedAtFullSocket: [UInt64] = []
    /// Notifications actually sent per second (all devices together).
    package var achievedRate: Double {
        let seconds = elapsed.inSeconds
        return seconds > 0 ? Double(sent) / seconds : 0
    }
}
