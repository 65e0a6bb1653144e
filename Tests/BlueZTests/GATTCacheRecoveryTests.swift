import BlueZ
import Testing

/// The stale-GATT-cache recovery decisions, without I/O; time is an instant the test chooses.
@Suite struct GATTCacheRecoveryTests {
    let start = ContinuousClock.now

    static func evidence(bonded: Bool = false, cacheReused: Bool = false, servedBefore: Bool = false)
        -> GATTCacheRecovery.Evidence
    {
        GATTCacheRecovery.Evidence(bonded: bonded, cacheReused: cacheReused, servedBefore: servedBefore)
    }

    @Test func anUnchangedCachedTreeOfAnUnbondedDeviceIsForgottenAtOnce() {
        // bluetoothd's cached copy stood (nothing discovered): waiting and reconnecting cannot change it.
        var recovery = GATTCacheRecovery()
        let stale = Self.evidence(cacheReused: true, servedBefore: true)
        #expect(recovery.servicesMissing(stale, at: start) == .forgetDevice)
        #expect(recovery.forgotten && recovery.reconnectsUsed == 0 && !recovery.waitedForLate)
        // The fresh discovery after the removal still lacks it: the peer does not have it; no removal loop.
        let fresh = Self.evidence(servedBefore: true)
        #expect(recovery.servicesMissing(fresh, at: start + .seconds(3)) == .giveUp(.missingAfterRediscovery))
        #expect(recovery.servicesMissing(stale, at: start + .seconds(9)) == .giveUp(.missingAfterRediscovery))
    }

    @Test func aDiscoveredTreeWaitsOnceForWhatTheDeviceServedBeforeThenRecovers() {
        var recovery = GATTCacheRecovery(configuration: .init(lateTimeout: .seconds(15)))
        let late = Self.evidence(servedBefore: true)
        #expect(recovery.servicesMissing(late, at: start) == .awaitLate(until: start + .seconds(15)))
        #expect(recovery.waitedForLate && !recovery.isIdle)
        // The wait ran out on the same connection: no second wait, the usual steps.
        #expect(recovery.servicesMissing(late, at: start + .seconds(15)) == .reconnect)
        #expect(recovery.servicesMissing(late, at: start + .seconds(17)) == .forgetDevice)
        #expect(recovery.servicesMissing(late, at: start + .seconds(20)) == .giveUp(.missingAfterRediscovery))
    }

    @Test func aNeedTheDeviceNeverServedIsNotWaitedFor() {
        var recovery = GATTCacheRecovery()
        let never = Self.evidence()
        #expect(recovery.servicesMissing(never, at: start) == .reconnect)
        #expect(recovery.servicesMissing(never, at: start) == .forgetDevice)
        #expect(recovery.forgotten)
        #expect(recovery.servicesMissing(never, at: start) == .giveUp(.missingAfterRediscovery))
    }

    @Test func aCachedTreeOfABondedDeviceIsGivenUpAtOnceWithoutAWaitOrAReconnect() {
        var recovery = GATTCacheRecovery()
        let bondedStale = Self.evidence(bonded: true, cacheReused: true, servedBefore: true)
        #expect(recovery.servicesMissing(bondedStale, at: start) == .giveUp(.staleBondedCache))
        #expect(!recovery.waitedForLate && recovery.reconnectsUsed == 0 && !recovery.forgotten)
        #expect(recovery.servicesMissing(bondedStale, at: start) == .giveUp(.staleBondedCache))
    }

    @Test func bondedDeviceIsNeverForgotten() {
        var recovery = GATTCacheRecovery()
        // No evidence either way (the first connection after bluetoothd loaded the device): one reconnect.
        let bonded = Self.evidence(bonded: true)
        #expect(recovery.servicesMissing(bonded, at: start) == .reconnect)
        #expect(recovery.servicesMissing(bonded, at: start) == .giveUp(.staleBondedCache))
        #expect(recovery.servicesMissing(bonded, at: start) == .giveUp(.staleBondedCache))
        #expect(!recovery.forgotten)
        // The reconnect then shows the cached copy standing: given up at once.
        recovery.servicesComplete()
        #expect(recovery.servicesMissing(bonded, at: start) == .reconnect)
        let cached = Self.evidence(bonded: true, cacheReused: true)
        #expect(recovery.servicesMissing(cached, at: start) == .giveUp(.staleBondedCache))
        #expect(!recovery.forgotten)
        // Bonded and served before, tree discovered: the late wait first, the bond still kept after it.
        recovery.servicesComplete()
        let late = Self.evidence(bonded: true, servedBefore: true)
        #expect(recovery.servicesMissing(late, at: start) == .awaitLate(until: start + .seconds(15)))
        #expect(recovery.servicesMissing(late, at: start + .seconds(15)) == .reconnect)
        #expect(recovery.servicesMissing(late, at: start + .seconds(16)) == .giveUp(.staleBondedCache))
    }

    @Test func aCompleteResolutionStartsOver() {
        var recovery = GATTCacheRecovery()
        let late = Self.evidence(servedBefore: true)
        #expect(recovery.servicesMissing(late, at: start) == .awaitLate(until: start + .seconds(15)))
        #expect(recovery.servicesMissing(late, at: start + .seconds(15)) == .reconnect)
        #expect(recovery.servicesMissing(late, at: start + .seconds(16)) == .forgetDevice)
        recovery.servicesComplete()
        #expect(recovery.isIdle && recovery.reconnectsUsed == 0 && !recovery.forgotten && !recovery.waitedForLate)
        let later = start + .seconds(600)
        #expect(recovery.servicesMissing(late, at: later) == .awaitLate(until: later + .seconds(15)))
    }

    @Test func reconnectCountAndLateTimeoutAreConfigurable() {
        var none = GATTCacheRecovery(configuration: .init(reconnects: 0))
        #expect(none.servicesMissing(Self.evidence(), at: start) == .forgetDevice)
        var bondedNone = GATTCacheRecovery(configuration: .init(reconnects: -3))
        #expect(bondedNone.servicesMissing(Self.evidence(bonded: true), at: start) == .giveUp(.staleBondedCache))
        var two = GATTCacheRecovery(configuration: .init(reconnects: 2))
        #expect(two.servicesMissing(Self.evidence(bonded: true), at: start) == .reconnect)
        #expect(two.servicesMissing(Self.evidence(bonded: true), at: start) == .reconnect)
        #expect(two.servicesMissing(Self.evidence(bonded: true), at: start) == .giveUp(.staleBondedCache))
        var noWait = GATTCacheRecovery(configuration: .init(lateTimeout: .zero))
        #expect(noWait.servicesMissing(Self.evidence(servedBefore: true), at: start) == .reconnect)
        var short = GATTCacheRecovery(configuration: .init(lateTimeout: .milliseconds(1500)))
        #expect(
            short.servicesMissing(Self.evidence(servedBefore: true), at: start)
                == .awaitLate(until: start + .milliseconds(1500)))
    }
}
