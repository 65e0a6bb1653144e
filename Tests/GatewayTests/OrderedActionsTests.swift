import TestSupport
import Testing

@testable import Gateway

/// `OrderedActions`: an actor re-entered while it performs one event's actions performs a later
/// event's after them, never between.
@Suite struct OrderedActionsTests {
    /// Performs events' actions through the queue; "A1" suspends until released, as a publish or
    /// a pool event does in the gateway.
    actor Performer {
        var queue = OrderedActions<String>()
        var performed: [String] = []
        var gate: CheckedContinuation<Void, Never>?

        func event(_ actions: [String]) async {
            if queue.add(actions) {
                while let action = queue.next() { await perform(action) }
            }
        }

        private func perform(_ action: String) async {
            performed.append(action)
            if action == "A1" { await withCheckedContinuation { gate = $0 } }
        }

        var suspended: Bool { gate != nil }
        var draining: Bool { queue.draining }

        func release() {
            gate?.resume()
            gate = nil
        }
    }

    @Test func actionsDecidedDuringASuspensionRunAfterTheEarlierEventsRest() async throws {
        let performer = Performer()
        let first = Task { await performer.event(["A1", "A2"]) }
        try #require(await waitUntil { await performer.suspended })
        // Decided while A1 is suspended: not performed now (the first caller will), and not before A2.
        await performer.event(["B1"])
        #expect(await performer.performed == ["A1"])
        await performer.release()
        await first.value
        #expect(await performer.performed == ["A1", "A2", "B1"])
        #expect(await !performer.draining)
        // The drain is over: the next event's caller performs its own actions at once.
        await performer.event(["C1"])
        #expect(await performer.performed == ["A1", "A2", "B1", "C1"])
    }

    @Test func anEventWithNothingToDoLeavesNoDrainBehind() {
        var queue = OrderedActions<Int>()
        let mustDrain = queue.add([])
        #expect(mustDrain)
        let nothing = queue.next()
        #expect(nothing == nil)
        #expect(!queue.draining)
        let first = queue.add([1, 2])
        let second = queue.add([3])
        #expect(first && !second)
        var performed: [Int] = []
        while let action = queue.next() { performed.append(action) }
        #expect(performed == [1, 2, 3])
        #expect(!queue.draining)
    }
}
