import BlueZ
import Bluetooth
import Testing

@Suite struct AdapterStateTrackerTests {
    @Test func noBlueZIsUnsupported() {
        var tracker = AdapterStateTracker()
        #expect(tracker.state == .unknown)
        #expect(tracker.handle(.bluezPresent(false)) == [.stateChanged(.unsupported)])
    }

    @Test func startupToPoweredOn() {
        var tracker = AdapterStateTracker()
        #expect(tracker.handle(.bluezPresent(true)) == [.loadObjects])
        #expect(tracker.state == .unknown)
        #expect(tracker.handle(.objectsLoaded(adapterPresent: true, powered: true)) == [.stateChanged(.poweredOn)])
    }

    @Test func missingAdapterIsUnsupportedUntilItAppears() {
        var tracker = AdapterStateTracker()
        _ = tracker.handle(.bluezPresent(true))
        #expect(tracker.handle(.objectsLoaded(adapterPresent: false, powered: false)) == [.stateChanged(.unsupported)])
        #expect(tracker.handle(.adapterAdded(powered: false)) == [.stateChanged(.poweredOff)])
    }

    @Test func powerCycle() {
        var tracker = poweredOn()
        #expect(tracker.handle(.poweredChanged(false)) == [.stateChanged(.poweredOff)])
        #expect(tracker.handle(.poweredChanged(false)) == [])
        #expect(tracker.handle(.poweredChanged(true)) == [.stateChanged(.poweredOn)])
    }

    @Test func bluezRestartIsResettingThenPoweredOn() {
        var tracker = poweredOn()
        #expect(tracker.handle(.bluezPresent(false)) == [.stateChanged(.resetting)])
        #expect(tracker.handle(.bluezPresent(true)) == [.loadObjects])
        #expect(tracker.state == .resetting)
        #expect(tracker.handle(.objectsLoaded(adapterPresent: true, powered: true)) == [.stateChanged(.poweredOn)])
    }

    @Test func adapterRemovalIsResetting() {
        var tracker = poweredOn()
        #expect(tracker.handle(.adapterRemoved) == [.stateChanged(.resetting)])
        #expect(tracker.handle(.adapterAdded(powered: true)) == [.stateChanged(.poweredOn)])
    }

    @Test func accessDeniedIsUnauthorizedUntilBlueZChanges() {
        var tracker = AdapterStateTracker()
        _ = tracker.handle(.bluezPresent(true))
        #expect(tracker.handle(.accessDenied) == [.stateChanged(.unauthorized)])
        #expect(tracker.handle(.poweredChanged(true)) == [])
        _ = tracker.handle(.bluezPresent(false))
        #expect(tracker.state == .resetting)
    }

    private func poweredOn() -> AdapterStateTracker {
        var tracker = AdapterStateTracker()
        _ = tracker.handle(.bluezPresent(true))
        _ = tracker.handle(.objectsLoaded(adapterPresent: true, powered: true))
        return tracker
    }
}
