import Testing

@testable import EventLoop

@Suite struct TimerHeapTests {
    private let start = ContinuousClock.now

    private func entry(_ milliseconds: Int, _ id: UInt64) -> TimerHeap<String>.Entry {
        .init(deadline: start + .milliseconds(milliseconds), id: id, body: "\(milliseconds)/\(id)")
    }

    @Test func dueTimersComeOutByDeadlineThenInTheOrderSet() {
        var heap = TimerHeap<String>()
        let set = [(30, 1), (10, 2), (20, 3), (10, 4), (40, 5), (10, 6), (20, 7)]
        for (milliseconds, id) in set { heap.insert(entry(milliseconds, UInt64(id))) }
        #expect(heap.nextDeadline == start + .milliseconds(10))
        #expect(heap.popDue(now: start + .milliseconds(9)).isEmpty)
        #expect(heap.popDue(now: start + .milliseconds(20)).map(\.body) == ["10/2", "10/4", "10/6", "20/3", "20/7"])
        #expect(heap.count == 2)
        #expect(heap.popDue(now: start + .seconds(1)).map(\.body) == ["30/1", "40/5"])
        #expect(heap.isEmpty && heap.nextDeadline == nil)
    }

    @Test func aRemovedTimerNeverComesOutAndTheRestKeepTheirOrder() {
        var heap = TimerHeap<String>()
        for id in 1...50 { heap.insert(entry((id * 37) % 50, UInt64(id))) }
        let removed = [heap.remove(id: 37), heap.remove(id: 37), heap.remove(id: 1)]
        #expect(removed == [true, false, true])
        let out = heap.popDue(now: start + .seconds(1))
        let expected = (1...50).filter { $0 != 37 && $0 != 1 }.sorted { (($0 * 37) % 50, $0) < (($1 * 37) % 50, $1) }
        #expect(out.map(\.id) == expected.map { UInt64($0) })
    }
}
