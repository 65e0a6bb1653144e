import Foundation
import Outbox

/// What the gateway's health topic reports about buffering and publishing.
public struct PublisherStats: Sendable, Hashable {
    /// The outbox's own figures (depth, bytes, oldest sample time, drops by reason, delivered).
    public var outbox: OutboxStats
    /// Publishes acknowledged since this publisher started.
    public var published: Int
    /// Publishes awaiting an acknowledgement now.
    public var inFlight: Int
    /// Whether the broker connection is up.
    public var connected: Bool
    /// The last outbox failure (full disk, read-only, locked, …) while it lasts; nil when the
    /// outbox works. A non-nil value means the gateway is degraded: readings are being refused.
    public var storeError: OutboxError?

    public init(
        outbox: OutboxStats, published: Int, inFlight: Int, connected: Bool, storeError: OutboxError? = nil
    ) {
        self.outbox = outbox
        self.published = published
        self.inFlight = inFlight
        self.connected = connected
        self.storeError = storeError
    }

    /// Readings waiting in the outbox (including those in flight).
    public var depth: Int { outbox.depth }
    /// Their topic + payload bytes.
    public var bytes: Int { outbox.bytes }
    /// How long the oldest waiting reading has waited since it was sampled.
    public func oldestUnsentAge(now: Date = Date()) -> Duration? { outbox.oldestAge(now: now) }
    /// Readings dropped by the caps or refused by the broker, ever (persisted).
    public var dropped: Int64 { outbox.droppedTotal }
}
