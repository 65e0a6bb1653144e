import Outbox

/// Offered readings the outbox refused for a reason that can pass, in offer order, at most a limit
/// (the oldest go first), each with the id of its memory publish when it is a memory-first spill:
/// a held reading whose memory publish the broker acknowledges is delivered, and leaves the hold
/// without ever being written (``acknowledged(_:)``).
struct HeldReadings {
    private(set) var entries: [OutboxEntry] = []
    /// The memory-publish id of each of ``entries``, at the same position; 0 for none (ids start at 1).
    private var memoryIDs: [UInt64] = []
    /// The ids in ``memoryIDs`` other than 0.
    private var pending: Set<UInt64> = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Appends `new`; `published` are the memory-publish ids of its first `published.count`
    /// readings (``MemoryFirstBuffer/Action/store(_:spilled:published:)``). Drops the oldest
    /// beyond `limit` and returns how many went.
    mutating func append(_ new: [OutboxEntry], published: [UInt64] = [], limit: Int) -> Int {
        entries += new
        for (index, _) in new.enumerated() {
            let id = index < published.count ? published[index] : 0
            memoryIDs.append(id)
            if id != 0 { pending.insert(id) }
        }
        let excess = entries.count - limit
        guard excess > 0 else { return 0 }
        removeFirst(excess)
        return excess
    }

    /// The oldest `limit` readings, with their memory-publish ids (0: none) at the same positions.
    func prefix(_ limit: Int) -> (entries: [OutboxEntry], memoryIDs: [UInt64]) {
        (Array(entries.prefix(limit)), Array(memoryIDs.prefix(limit)))
    }

    /// Removes the oldest `count` readings (committed, or dropped).
    mutating func removeFirst(_ count: Int) {
        for id in memoryIDs.prefix(count) where id != 0 { pending.remove(id) }
        entries.removeFirst(count)
        memoryIDs.removeFirst(count)
    }

    mutating func removeAll() {
        entries.removeAll()
        memoryIDs.removeAll()
        pending.removeAll()
    }

    /// The broker acknowledged memory publish `id`: its reading, if held, is delivered and leaves
    /// the hold. Returns whether it was held.
    mutating func acknowledged(_ id: UInt64) -> Bool {
        guard pending.remove(id) != nil, let index = memoryIDs.firstIndex(of: id) else { return false }
        entries.remove(at: index)
        memoryIDs.remove(at: index)
        return true
    }

    /// Memory publish `id` failed: its reading, if held, stays to be written.
    mutating func publishFailed(_ id: UInt64) {
        guard pending.remove(id) != nil, let index = memoryIDs.firstIndex(of: id) else { return }
        memoryIDs[index] = 0
    }
}
