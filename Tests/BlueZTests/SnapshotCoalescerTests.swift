import BlueZ
import Testing

@Suite struct SnapshotCoalescerTests {
    @Test func aLoneRequestIssuesItsOwnCall() {
        var coalescer = SnapshotCoalescer()
        #expect(coalescer.request() == .issue(1))
        #expect(coalescer.finished(1) == nil)
        #expect(coalescer.inFlight == nil)
        #expect(coalescer.request() == .issue(2))
    }

    /// Twenty connects ending together: one call for the first, one shared by the nineteen that came while
    /// it was in flight (it may have been sent before their services resolved), none more.
    @Test func requestsDuringACallShareTheNextOne() {
        var coalescer = SnapshotCoalescer()
        #expect(coalescer.request() == .issue(1))
        for _ in 0..<19 { #expect(coalescer.request() == .wait(2)) }
        #expect(coalescer.finished(1) == 2)
        #expect(coalescer.inFlight == 2)
        #expect(coalescer.request() == .wait(3))
        #expect(coalescer.finished(2) == 3)
        #expect(coalescer.finished(3) == nil)
        #expect(coalescer.inFlight == nil && !coalescer.nextPromised)
    }

    @Test func aStaleFinishChangesNothing() {
        var coalescer = SnapshotCoalescer()
        #expect(coalescer.request() == .issue(1))
        #expect(coalescer.request() == .wait(2))
        #expect(coalescer.finished(7) == nil)
        #expect(coalescer.inFlight == 1 && coalescer.nextPromised)
    }
}
