import TestSupport
import Testing

@testable import Gateway

/// `Deadline.run` bounds the stop's waits (commands in flight, BLELink's disconnects): it must
/// return at the deadline even when the work does not end on cancellation (a D-Bus call or a
/// `Task.value` await that ignores it), or a SIGTERM waits for the work instead of the deadline.
@Suite struct DeadlineTests {
    /// Work that ignores cancellation until the test opens the gate.
    actor Gate {
        private var waiter: CheckedContinuation<Void, Never>?
        private var opened = false

        func wait() async {
            guard !opened else { return }
            await withCheckedContinuation { waiter = $0 }
        }

        func open() {
            opened = true
            waiter?.resume()
            waiter = nil
        }
    }

    actor Flag {
        private(set) var isSet = false
        func set() { isSet = true }
    }

    @Test func returnsAtTheDeadlineWhenTheWorkIgnoresCancellation() async {
        let gate = Gate()
        let returned = Flag()
        let runner = Task {
            await Deadline.run(until: .now + .milliseconds(200)) { await gate.wait() }
            await returned.set()
        }
        let onTime = await waitUntil(timeout: .seconds(5)) { await returned.isSet }
        await gate.open()  // lets a run that waits for the work end, so the test itself never hangs
        await runner.value
        #expect(onTime, "Deadline.run waited for work that ignores cancellation past its deadline")
    }

    @Test func returnsAsSoonAsTheWorkEnds() async {
        // An hour's deadline: a run that waited for it would not end within the 10 s of runnable
        // time `withDeadline` allows (wall time is no measure here: a starved pool stretches it).
        let returned = await withDeadline(.seconds(10)) { () async -> Bool? in
            await Deadline.run(until: .now + .seconds(3600)) {}
            return true
        }
        #expect(returned == true)
    }

    @Test func cancelsTheWorkAtTheDeadline() async {
        let cancelled = Flag()
        await Deadline.run(until: .now + .milliseconds(100)) {
            try? await Task.sleep(for: .seconds(60))
            if Task.isCancelled { await cancelled.set() }
        }
        #expect(await waitUntil(timeout: .seconds(5)) { await cancelled.isSet })
    }

    @Test func endsWhenTheCallerIsCancelled() async {
        let gate = Gate()
        let runner = Task { await Deadline.run(until: .now + .seconds(60)) { await gate.wait() } }
        runner.cancel()
        let ended = Flag()
        Task {
            await runner.value
            await ended.set()
        }
        let onTime = await waitUntil(timeout: .seconds(5)) { await ended.isSet }
        await gate.open()
        #expect(onTime)
    }
}
