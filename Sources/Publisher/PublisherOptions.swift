/// How the publisher drives the broker.
package struct PublisherOptions: Sendable, Hashable {
    /// When readings are written to the outbox (`outbox.mode`).
    package enum Mode: Sendable, Hashable {
        /// Every reading is committed to the outbox before it is published (survives a SIGKILL
        /// or, with `synchronous: full`, a power cut).
        case durable
        /// Readings are published from memory while the broker acknowledges them within
        /// `spillAfter`, and written to the outbox only when an acknowledgement is late, the broker
        /// is away, or the publisher stops (``MemoryFirstBuffer``). A SIGKILL or power cut loses at
        /// most the unacknowledged readings of the last `spillAfter`.
        case memoryFirst(spillAfter: Duration)
    }

    /// When readings are written to the outbox. ``Publisher/offer(_:)`` follows it;
    /// ``Publisher/submit(_:)-([OutboxEntry])`` always commits.
    package var mode: Mode
    /// Memory-first mode: at most this many readings await acknowledgement in memory; beyond it all
    /// of them are spilled to the outbox.
    package var memoryLimit: Int
    /// At most this many publishes await their acknowledgement at once (`outbox.inflight`).
    package var window: Int
    /// When set, every publish carries the entry's sample time (ISO 8601, UTC, milliseconds) in an
    /// MQTT 5 user property of this name, e.g. `"sample_time"`. Ignored (with a warning) when the
    /// client speaks MQTT 3.1.1, which has no properties.
    package var sampleTimeProperty: String?
    /// Pause after a transient failure (publish while the connection was dropping, outbox busy).
    package var retryDelay: Duration
    /// While connected, publishes without any acknowledgement for this long are sent again from
    /// the oldest unacknowledged reading (guards against a lost acknowledgement).
    package var stallTimeout: Duration
    /// How long an acknowledgement may wait to be handled when nothing else wakes the publisher
    /// (new readings, a full window and a stop handle them at once). Batching them saves a thread
    /// wake-up per reading at low rates.
    package var acknowledgementDelay: Duration
    /// How long acknowledged rows may wait to be deleted together (``removalBatch`` of them are
    /// deleted at once; a crash re-sends those still waiting once: at-least-once).
    package var removalDelay: Duration
    /// Acknowledged rows deleted in one transaction as soon as this many gathered. Each deletion
    /// is a transaction of its own (unless it joins a commit), whose commit writes the counters'
    /// and the queue head's pages whatever its size: at 25,000 readings/s, deleting a quarter
    /// window (16 rows) at a time cost a quarter of the outbox thread (issue 20).
    package var removalBatch: Int
    /// At most this many offered readings are held in memory while the outbox refuses writes
    /// (locked, disk full, …); beyond it the oldest are dropped and counted.
    package var heldLimit: Int

    package init(
        window: Int = 64, sampleTimeProperty: String? = nil, retryDelay: Duration = .milliseconds(200),
        stallTimeout: Duration = .seconds(30), acknowledgementDelay: Duration = .milliseconds(20),
        removalDelay: Duration = .milliseconds(50), removalBatch: Int = 256, heldLimit: Int = 10_000,
        mode: Mode = .durable, memoryLimit: Int = 4096
    ) {
        self.mode = mode
        self.memoryLimit = max(1, memoryLimit)
        self.window = max(1, window)
        self.heldLimit = max(1, heldLimit)
        self.acknowledgementDelay = acknowledgementDelay
        self.removalDelay = removalDelay
        self.removalBatch = max(1, removalBatch)
        self.sampleTimeProperty = sampleTimeProperty
        self.retryDelay = retryDelay
        self.stallTimeout = stallTimeout
    }
}
