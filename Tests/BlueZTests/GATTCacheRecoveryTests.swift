import BlueZ
import Testing

/// The stale-GATT-cache recovery decisions, without I/O.
@Suite struct GATTCacheRecoveryTests {
    @Test func unbondedDeviceIsReconnectedThenForgottenThenGivenUp() {
        var recovery = GATTCacheRecovery()
        #expect(recovery.servicesMissing(bonded: false) == .reconnect)
        #expect(recovery.servicesMissing(bonded: false) == .forgetDevice)
        #expect(recovery.forgotten)
        // A fresh discovery still lacks it: the peer does not have it; no removal loop.
        #expect(recovery.servicesMissing(bonded: false) == .giveUp(.missingAfterRediscovery))
        #expect(recovery.servicesMissing(bonded: false) == .giveUp(.missingAfterRediscovery))
    }

    @Test func bondedDeviceIsNeverForgotten() {
        var recovery = GATTCacheRecovery()
        #expect(recovery.servicesMissing(bonded: true) == .reconnect)
        #expect(recovery.servicesMissing(bonded: true) == .giveUp(.staleBondedCache))
        #expect(recovery.servicesMissing(bonded: true) == .giveUp(.staleBondedCache))
        #expect(!recovery.forgotten)
    }

    @Test func aCompleteResolutionStartsOver() {
        var recovery = GATTCacheRecovery()
        #expect(recovery.servicesMissing(bonded: false) == .reconnect)
        #expect(recovery.servicesMissing(bonded: false) == .forgetDevice)
        recovery.servicesComplete()
        #expect(recovery.reconnectsUsed == 0)
        #expect(!recovery.forgotten)
        #expect(recovery.servicesMissing(bonded: false) == .reconnect)
    }

    @Test func reconnectCountIsConfigurable() {
        var none = GATTCacheRecovery(configuration: .init(reconnects: 0))
        #expect(none.servicesMissing(bonded: false) == .forgetDevice)
        var bondedNone = GATTCacheRecovery(configuration: .init(reconnects: -3))
        #expect(bondedNone.servicesMissing(bonded: true) == .giveUp(.staleBondedCache))
        var two = GATTCacheRecovery(configuration: .init(reconnects: 2))
        #expect(two.servicesMissing(bonded: true) == .reconnect)
        #expect(two.servicesMissing(bonded: true) == .reconnect)
        #expect(two.servicesMissing(bonded: true) == .giveUp(.staleBondedCache))
    }
}
