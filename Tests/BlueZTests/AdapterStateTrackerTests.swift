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

    /// bluetoothd owns its name but its `GetManagedObjects` fails (not answered in time): the load
    /// is tried again after 1, 2, 4, 8, then every 15 s, while the state stays `unknown`.
    @Test func aFailedLoadIsRetriedWithBackoff() {
        var tracker = AdapterStateTracker()
        #expect(tracker.handle(.bluezPresent(true)) == [.loadObjects])
        let delays = (0..<7).map { _ in tracker.handle(.loadFailed) }
        #expect(
            delays == [1, 2, 4, 8, 15, 15, 15].map { [AdapterStateTracker.Action.reloadObjects(after: .seconds($0))] })
        #expect(tracker.state == .unknown)
        #expect(tracker.handle(.objectsLoaded(adapterPresent: true, powered: true)) == [.stateChanged(.poweredOn)])
    }

    /// The backoff starts over after a load that answered, and after bluetoothd changed owner.
    @Test func theBackoffStartsOverAfterALoadOrANewOwner() {
        var tracker = AdapterStateTracker()
        _ = tracker.handle(.bluezPresent(true))
        _ = tracker.handle(.loadFailed)
        _ = tracker.handle(.loadFailed)
        _ = tracker.handle(.objectsLoaded(adapterPresent: true, powered: true))
        _ = tracker.handle(.bluezPresent(false))
        #expect(tracker.handle(.bluezPresent(true)) == [.loadObjects])
        #expect(tracker.handle(.loadFailed) == [.reloadObjects(after: .seconds(1))])
        #expect(tracker.handle(.loadFailed) == [.reloadObjects(after: .seconds(2))])
        _ = tracker.handle(.bluezPresent(false))
        #expect(tracker.state == .resetting)
        #expect(tracker.handle(.bluezPresent(true)) == [.loadObjects])
        #expect(tracker.handle(.loadFailed) == [.reloadObjects(after: .seconds(1))])
    }

    /// No retry without an owner (its return starts a load), after a refusal, or once loaded.
    @Test func aFailureIsNotRetriedWhereNoLoadIsDue() {
        var absent = AdapterStateTracker()
        _ = absent.handle(.bluezPresent(false))
        #expect(absent.handle(.loadFailed) == [])
        var denied = AdapterStateTracker()
        _ = denied.handle(.bluezPresent(true))
        _ = denied.handle(.accessDenied)
        #expect(denied.handle(.loadFailed) == [])
        var loaded = poweredOn()
        #expect(loaded.handle(.loadFailed) == [])
    }

    private func poweredOn() -> AdapterStateTracker {
        var tracker = AdapterStateTracker()
        _ = tracker.handle(.bluezPresent(true))
        _ = tracker.handle(.objectsLoaded(adapterPresent: true, powered: true))
        return tracker
    }
}
