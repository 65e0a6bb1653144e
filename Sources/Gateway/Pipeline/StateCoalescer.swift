import Outbox

/// Merges the state publishes of one device's burst of readings into one: a device that notifies
/// several characteristics at once (the demo's thermometer: four in the same millisecond) gets
/// one `<base>/<device>` message carrying all of them instead of one per characteristic.
///
/// The first reading of a burst asks for a flush `window` later; readings arriving before the
/// flush replace the pending state entry (each entry holds the whole merged state, so the last
/// one carries every reading's fields). A lone reading is therefore published `window` after it
/// arrived, never later. A reading that changes a field the pending state already changed (two
/// heart rates 10 ms apart) publishes the pending state first, so every value read reaches MQTT
/// in at least one state message; only readings of different fields share one. A zero window
/// publishes every reading's state at once. Pure: the ``ReadingPipeline`` holds it under its lock
/// and runs the flushes on its injected clock.
struct StateCoalescer: Sendable {
    enum Decision: Equatable, Sendable {
        /// Publish this entry now (no window).
        case publish(OutboxEntry)
        /// The first reading of a burst: flush the device after the window.
        case scheduleFlush
        /// A flush is already due; the entry replaced the pending one.
        case merged
        /// The reading changes a field the pending state changed too: publish that pending state
        /// now; this entry waits for the flush already due.
        case publishPending(OutboxEntry)
    }

    let window: Duration
    /// Per device: the latest state entry waiting for its flush, and the fields the burst changed.
    private(set) var pending: [String: (entry: OutboxEntry, fields: Set<String>)] = [:]

    init(window: Duration) {
        self.window = window
    }

    /// The state entry of a reading of `device` that changed `fields`.
    mutating func offer(_ entry: OutboxEntry, device: String, fields: Set<String>) -> Decision {
        guard window > .zero else { return .publish(entry) }
        guard let previous = pending[device] else {
            pending[device] = (entry, fields)
            return .scheduleFlush
        }
        if previous.fields.isDisjoint(with: fields) {
            pending[device] = (entry, previous.fields.union(fields))
            return .merged
        }
        pending[device] = (entry, fields)
        return .publishPending(previous.entry)
    }

    /// The device's flush is due: the entry to publish (nil when there is none, e.g. after ``flushAll()``).
    mutating func flush(device: String) -> OutboxEntry? {
        pending.removeValue(forKey: device)?.entry
    }

    /// Everything pending, now (the gateway is stopping), in device order.
    mutating func flushAll() -> [OutboxEntry] {
        let entries = pending.keys.sorted().compactMap { pending[$0]?.entry }
        pending = [:]
        return entries
    }
}
