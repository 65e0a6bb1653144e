import Foundation

/// A snapshot of the outbox for health reporting.
package struct OutboxStats: Sendable, Hashable {
    /// Entries waiting for an acknowledgement.
    package var depth: Int
    /// Their topic + payload bytes.
    package var bytes: Int
    /// Sample time of the oldest waiting entry (nil when empty).
    package var oldestSampleTime: Date?
    /// Entries dropped by the caps since the database was created, by reason (persisted).
    package var dropped: [OutboxDropReason: Int64]
    /// Entries removed after the broker acknowledged them since the database was created (persisted).
    package var delivered: Int64

    package init(
        depth: Int = 0, bytes: Int = 0, oldestSampleTime: Date? = nil, dropped: [OutboxDropReason: Int64] = [:],
        delivered: Int64 = 0
    ) {
        self.depth = depth
        self.bytes = bytes
        self.oldestSampleTime = oldestSampleTime
        self.dropped = dropped
        self.delivered = delivered
    }

    /// All drops, whatever the reason.
    package var droppedTotal: Int64 { dropped.values.reduce(0, +) }

    /// How long the oldest waiting entry has waited since it was sampled.
    package func oldestAge(now: Date) -> Duration? {
        oldestSampleTime.map { .microseconds(Int64((now.timeIntervalSince($0) * 1_000_000).rounded())) }
    }
}
