import Foundation
import Outbox

/// What the gateway's health topic reports about buffering and publishing.
package struct PublisherStats: Sendable, Hashable {
    /// The outbox's own figures (depth, bytes, oldest sample time, drops by reason, delivered).
    package var outbox: OutboxStats
    /// Publishes acknowledged since this publisher started.
    package var published: Int
    /// Publishes awaiting an acknowledgement now.
    package var inFlight: Int
    /// Whether the broker connection is up.
    package var connected: Bool
    /// The last outbox failure (full disk, read-only, locked, …) while it lasts; nil when the
    /// outbox works. A non-nil value means the gateway is degraded: readings are being refused.
    package var storeError: OutboxError?
    /// Offered readings held in memory because the outbox refuses writes; committed as soon as it
    /// accepts them again.
    package var held: Int
    /// Readings dropped because the memory hold was full, since the publisher started.
    package var heldDropped: Int
    /// Of those, the ones not yet added to the outbox's persisted counter (reason `held`): it is
    /// written with the next write the outbox accepts.
    package var heldDropsUnpersisted: Int
    /// Memory-first mode: readings published from memory and awaiting their acknowledgement (not in
    /// the outbox; a SIGKILL would lose them).
    package var inMemory: Int
    /// Memory-first mode: readings written to the outbox after all (late acknowledgement, broker
    /// away, stop), since the publisher started.
    package var spilled: Int
    /// Memory-first mode: offered readings are published from memory now (connected, outbox
    /// drained); false in durable mode.
    package var publishesFromMemory: Bool
    /// Times the in-flight window stalled (no acknowledgement for `stallTimeout` while connected)
    /// and was sent again from the oldest unacknowledged row, since the publisher started.
    package var stalls: Int

    package init(
        outbox: OutboxStats, published: Int, inFlight: Int, connected: Bool, storeError: OutboxError? = nil,
        held: Int = 0, heldDropped: Int = 0, heldDropsUnpersisted: Int = 0, inMemory: Int = 0, spilled: Int = 0,
        publishesFromMemory: Bool = false, stalls: Int = 0
    ) {
        self.stalls = stalls
        self.publishesFromMemory = publishesFromMemory
        self.inMemory = inMemory
        self.spilled = spilled
        self.outbox = outbox
        self.published = published
        self.inFlight = inFlight
        self.connected = connected
        self.storeError = storeError
        self.held = held
        self.heldDropped = heldDropped
        self.heldDropsUnpersisted = heldDropsUnpersisted
    }

    /// Readings waiting: in the outbox (including those in flight), held in memory while the outbox
    /// refuses writes, and awaiting acknowledgement from memory.
    package var depth: Int { outbox.depth + held + inMemory }
    /// Their topic + payload bytes.
    package var bytes: Int { outbox.bytes }
    /// How long the oldest waiting reading has waited since it was sampled.
    package func oldestUnsentAge(now: Date) -> Duration? { outbox.oldestAge(now: now) }
    /// Readings dropped by the caps, refused by the broker or dropped from a full memory hold, ever
    /// (persisted in the outbox; hold drops not yet written are added).
    package var dropped: Int64 { outbox.droppedTotal + Int64(heldDropsUnpersisted) }
}
