import Testing

@testable import Gateway

/// The answer lanes' in-flight window: a slot per publish awaiting its acknowledgement.
@Suite struct PublishSlotsTests {
    @Test func slotsAreTakenUpToTheCountAndGivenBack() async {
        let slots = PublishSlots(3)
        for _ in 0..<3 { #expect(await slots.acquire()) }
        #expect(slots.inUse == 3)
        slots.release()
        #expect(slots.inUse == 2)
        #expect(await slots.acquire())
        #expect(slots.inUse == 3)
    }

    @Test func aFullWindowWaitsForARelease() async {
        let slots = PublishSlots(1)
        #expect(await slots.acquire())
        let waiting = Task { await slots.acquire() }
        slots.release()
        #expect(await waiting.value)
        #expect(slots.inUse == 1)
    }

    @Test func aCancelledWaitTakesNoSlot() async {
        let slots = PublishSlots(1)
        #expect(await slots.acquire())
        let waiting = Task { await slots.acquire() }
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(slots.inUse == 1)
    }

    @Test func drainReturnsOnceEveryPublishResolved() async {
        let slots = PublishSlots(2)
        #expect(await slots.acquire())
        #expect(await slots.acquire())
        let drained = Task { await slots.drain() }
        slots.release()
        slots.release()
        await drained.value
        #expect(slots.inUse == 0)
    }

    @Test func releasesBeyondTheCountAreIgnored() {
        let slots = PublishSlots(2)
        slots.release()
        #expect(slots.inUse == 0)
    }
}
