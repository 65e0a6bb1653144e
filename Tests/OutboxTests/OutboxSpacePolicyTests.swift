import Testing

@testable import Outbox

@Suite struct OutboxSpacePolicyTests {
    @Test func theFirstFullWriteReleasesTheReservePinsAndCheckpoints() {
        var policy = OutboxSpacePolicy(reserve: 1_048_576)
        #expect(policy.spaceObserved(freeBytes: 0).isEmpty)  // not short: nothing to do
        #expect(policy.writeFailedForSpace() == [.releaseReserve, .pinDatabase, .checkpoint])
        #expect(policy.short)
        #expect(policy.writeFailedForSpace() == [.checkpoint])
    }

    @Test func theDatabaseGrowsAgainOnlyOnceTwiceTheReserveIsFree() {
        var policy = OutboxSpacePolicy(reserve: 1_048_576)
        _ = policy.writeFailedForSpace()
        #expect(policy.spaceObserved(freeBytes: 2_097_151).isEmpty)
        #expect(policy.short)
        #expect(policy.spaceObserved(freeBytes: 2_097_152) == [.createReserve, .unpinDatabase])
        #expect(!policy.short)
    }

    @Test func withoutAReserveItStillPinsAndResumesAtTwoMebibytes() {
        var policy = OutboxSpacePolicy(reserve: 0)
        #expect(policy.writeFailedForSpace() == [.releaseReserve, .pinDatabase, .checkpoint])
        #expect(policy.resumeThreshold == 2_097_152)
        #expect(policy.spaceObserved(freeBytes: 3_000_000) == [.unpinDatabase])
    }

    @Test func aReserveThatCannotBeAllocatedAtOpenStartsPinned() {
        var policy = OutboxSpacePolicy(reserve: 4_194_304)
        #expect(policy.reserveUnavailable() == [.pinDatabase])
        #expect(policy.reserveUnavailable().isEmpty)
        #expect(policy.spaceObserved(freeBytes: 8_388_608) == [.createReserve, .unpinDatabase])
    }
}
