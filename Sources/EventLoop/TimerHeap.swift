/// The timers of one ``EventLoop``: a binary min-heap ordered by deadline, then by the order they
/// were set, so timers with one deadline fire in the order set. Pure: no clock, no thread.
struct TimerHeap<Body> {
    struct Entry {
        let deadline: ContinuousClock.Instant
        /// Increasing in the order timers are set; also the timer's identity for ``remove(id:)``.
        let id: UInt64
        let body: Body

        func isEarlier(than other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && id < other.id)
        }
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    /// The earliest deadline, if any timer is set.
    var nextDeadline: ContinuousClock.Instant? { entries.first?.deadline }

    mutating func insert(_ entry: Entry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    /// Removes and returns, earliest first, every timer whose deadline is at or before `now`.
    mutating func popDue(now: ContinuousClock.Instant) -> [Entry] {
        var due: [Entry] = []
        while let first = entries.first, first.deadline <= now {
            due.append(removeEntry(at: 0))
        }
        return due
    }

    /// Removes the timer `id`; false when it is not set (fired or removed already).
    @discardableResult
    mutating func remove(id: UInt64) -> Bool {
        guard let index = entries.firstIndex(where: { $0.id == id }) else { return false }
        _ = removeEntry(at: index)
        return true
    }

    mutating func removeAll() { entries.removeAll() }

    private mutating func removeEntry(at index: Int) -> Entry {
        let removed = entries[index]
        let last = entries.removeLast()
        if index < entries.count {
            entries[index] = last
            siftDown(index)
            siftUp(index)
        }
        return removed
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].isEarlier(than: entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            for child in [2 * parent + 1, 2 * parent + 2]
            where child < entries.count && entries[child].isEarlier(than: entries[smallest]) {
                smallest = child
            }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

// Spelled out: Swift 6.0 does not infer these for a generic type, and the loop returns due
// entries out of its state lock (`Mutex.withLock` takes the state `inout sending`).
extension TimerHeap: Sendable where Body: Sendable {}
extension TimerHeap.Entry: Sendable where Body: Sendable {}
