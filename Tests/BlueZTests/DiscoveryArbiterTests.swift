import BlueZ
import Bluetooth
import Testing

@Suite struct DiscoveryArbiterTests {
    typealias Arbiter = DiscoveryArbiter<Int>
    let heartRate = BluetoothUUID(UInt16(0x180D))
    let battery = BluetoothUUID(UInt16(0x180F))

    @Test func firstScannerSetsFilterThenStartsOneSession() {
        var arbiter = Arbiter()
        #expect(arbiter.handle(.scannerAdded(1, DiscoveryFilter(services: [heartRate]))) == [])  // no adapter yet
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter(services: [heartRate]))])
        // A second scanner while the filter call is in flight: nothing overlaps.
        #expect(arbiter.handle(.scannerAdded(2, DiscoveryFilter(services: [heartRate]))) == [])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
    }

    @Test func laterScannersWidenTheFilterWithoutRestarting() {
        var arbiter = running([1: DiscoveryFilter(services: [heartRate], rssiThreshold: -70)])
        let widened = DiscoveryFilter(services: [heartRate, battery], rssiThreshold: -90, allowDuplicates: true)
        #expect(
            arbiter.handle(
                .scannerAdded(
                    2,
                    DiscoveryFilter(
                        services: [battery], rssiThreshold: -90, allowDuplicates: true))) == [.setFilter(widened)])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
        // One scanner wanting everything clears the service list.
        #expect(
            arbiter.handle(.scannerAdded(3, DiscoveryFilter())) == [
                .setFilter(DiscoveryFilter(services: [], rssiThreshold: nil, allowDuplicates: true))
            ])
    }

    @Test func lastScannerLeavingStopsDiscovery() {
        var arbiter = running([1: DiscoveryFilter(), 2: DiscoveryFilter()])
        #expect(arbiter.handle(.scannerRemoved(1)) == [])
        #expect(arbiter.handle(.scannerRemoved(2)) == [.stopDiscovery])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(!arbiter.isDiscovering)
        // A new scanner after that starts again.
        #expect(arbiter.handle(.scannerAdded(3, DiscoveryFilter())) == [.setFilter(DiscoveryFilter())])
    }

    @Test func scannerLeavingDuringStartIsHandledAfterTheCall() {
        var arbiter = Arbiter()
        _ = arbiter.handle(.adapterAvailable(true))
        _ = arbiter.handle(.scannerAdded(1, DiscoveryFilter()))
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        #expect(arbiter.handle(.scannerRemoved(1)) == [])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.stopDiscovery])
    }

    @Test func powerCycleResumesScanning() {
        var arbiter = running([1: DiscoveryFilter(services: [heartRate])])
        #expect(arbiter.handle(.adapterAvailable(false)) == [])
        #expect(!arbiter.isDiscovering)
        #expect(arbiter.scanners.count == 1)
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter(services: [heartRate]))])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
    }

    /// A call's result can reach the manager after the adapter's signals (replies and signals take
    /// different paths), so it may belong to a call BlueZ already dropped. Power going off ends
    /// discovery (`Discovering` false restarts it, then `Powered` false); when power is back a new
    /// call is in flight, and the restart's late `NotReady` must not be taken for its answer: it
    /// marked the adapter unavailable again and scanning never resumed
    /// (`CentralSimulatorTests.adapterPowerCycle`, 1 in 4 stress runs under load).
    @Test func aLateResultOfACallFromBeforeAPowerCycleIsIgnored() {
        var arbiter = running([1: DiscoveryFilter(services: [heartRate])])
        #expect(arbiter.handle(.discoveringChanged(false)) == [.startDiscovery])
        let stale = arbiter.lastCall
        #expect(arbiter.handle(.adapterAvailable(false)) == [])
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter(services: [heartRate]))])
        #expect(arbiter.handle(.callFailed(stale, BluetoothError(.notPoweredOn))) == [])
        #expect(arbiter.isAdapterAvailable)
        #expect(arbiter.isBusy)
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
    }

    /// A late success is not the answer of the call in flight either.
    @Test func aLateSuccessIsNotTakenForTheCallInFlight() {
        var arbiter = running([1: DiscoveryFilter()])
        #expect(arbiter.handle(.discoveringChanged(false)) == [.startDiscovery])
        let stale = arbiter.lastCall
        _ = arbiter.handle(.adapterAvailable(false))
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter())])
        #expect(arbiter.handle(.callSucceeded(stale)) == [])
        #expect(arbiter.isBusy)
        #expect(!arbiter.isDiscovering)
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
    }

    @Test func discoveryStoppedBehindOurBackRestarts() {
        var arbiter = running([1: DiscoveryFilter()])
        _ = arbiter.handle(.discoveringChanged(true))
        #expect(arbiter.handle(.discoveringChanged(false)) == [.startDiscovery])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
    }

    /// `InProgress` while the adapter says `Discovering`: our session exists (a stale one).
    @Test func inProgressWhileDiscoveringIsOurSession() {
        var arbiter = Arbiter()
        _ = arbiter.handle(.discoveringChanged(true))
        _ = arbiter.handle(.adapterAvailable(true))
        _ = arbiter.handle(.scannerAdded(1, DiscoveryFilter()))
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        #expect(arbiter.handle(.callFailed(arbiter.lastCall, BluetoothError(.inProgress))) == [])
        #expect(arbiter.isDiscovering)
        #expect(!arbiter.isBusy)
    }

    /// `InProgress` while the adapter does not say `Discovering`: bluetoothd's answer when the
    /// kernel refused to start, with our session dropped. After a pause the arbiter stops what may
    /// be ours ("No discovery started" counts as stopped) and starts again; the pauses grow while
    /// it keeps failing, and start over after a start that succeeded.
    @Test func inProgressWithNothingDiscoveringIsRetriedAfterAPause() {
        var arbiter = Arbiter()
        _ = arbiter.handle(.adapterAvailable(true))
        _ = arbiter.handle(.scannerAdded(1, DiscoveryFilter()))
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        let refused = BluetoothError(.inProgress)
        var pauses: [Duration] = []
        for _ in 0..<6 {
            let actions = arbiter.handle(.callFailed(arbiter.lastCall, refused))
            guard case .retryLater(let pause, let error)? = actions.first, actions.count == 1 else {
                Issue.record("not a retry: \(actions)")
                return
            }
            #expect(error == refused)
            pauses.append(pause)
            // Nothing is called before the pause has passed.
            #expect(arbiter.handle(.scannerAdded(2, DiscoveryFilter())) == [])
            #expect(arbiter.handle(.retryDue) == [.stopDiscovery])
            #expect(
                arbiter.handle(.callFailed(arbiter.lastCall, BluetoothError(.failed, "No discovery started")))
                    == [.setFilter(DiscoveryFilter())])
            #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        }
        #expect(pauses == [1, 2, 4, 8, 15, 15].map { .seconds($0) })
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
        // After a start that succeeded, the first pause is 1 s again.
        _ = arbiter.handle(.discoveringChanged(false))
        #expect(
            arbiter.handle(.callFailed(arbiter.lastCall, refused)).first
                == .retryLater(after: .seconds(1), error: refused))
    }

    /// A `StartDiscovery` bluetoothd did not answer in time is retried the same way.
    @Test func anUnansweredStartIsRetried() {
        var arbiter = starting()
        let timeout = BluetoothError(.timeout)
        #expect(
            arbiter.handle(.callFailed(arbiter.lastCall, timeout)) == [.retryLater(after: .seconds(1), error: timeout)])
        #expect(arbiter.scanners.count == 1)
        #expect(arbiter.handle(.retryDue) == [.stopDiscovery])
        // A stop that succeeds (the session had started after all) also leads to a fresh start.
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.setFilter(DiscoveryFilter())])
    }

    /// A power cycle while a retry waits: the adapter that comes back gets a session at once, not
    /// when the pause meant for the one that refused ends (up to 15 s later).
    @Test func aPowerCycleDuringARetryPauseStartsAtOnce() {
        var arbiter = starting()
        let refused = BluetoothError(.inProgress)
        guard case .retryLater? = arbiter.handle(.callFailed(arbiter.lastCall, refused)).first else {
            Issue.record("not a retry")
            return
        }
        #expect(arbiter.handle(.adapterAvailable(false)) == [])
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter())])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [.startDiscovery])
        #expect(arbiter.handle(.callSucceeded(arbiter.lastCall)) == [])
        #expect(arbiter.isDiscovering)
        // The old pause's end changes nothing.
        #expect(arbiter.handle(.retryDue) == [])
    }

    @Test func startFailureFailsTheScanners() {
        var arbiter = starting()
        let error = BluetoothError(.failed)
        #expect(
            arbiter.handle(.callFailed(arbiter.lastCall, error))
                == [.failScanners([1], error), .stopDiscovery].dropLast())
        #expect(arbiter.scanners.isEmpty)
    }

    @Test func notReadyWaitsForTheAdapter() {
        var arbiter = Arbiter()
        _ = arbiter.handle(.adapterAvailable(true))
        _ = arbiter.handle(.scannerAdded(1, DiscoveryFilter()))
        #expect(arbiter.handle(.callFailed(arbiter.lastCall, BluetoothError(.notPoweredOn))) == [])
        #expect(!arbiter.isAdapterAvailable)
        #expect(arbiter.handle(.adapterAvailable(true)) == [.setFilter(DiscoveryFilter())])
    }

    @Test func stopFailureStillCountsAsStopped() {
        var arbiter = running([1: DiscoveryFilter()])
        _ = arbiter.handle(.scannerRemoved(1))
        #expect(arbiter.handle(.callFailed(arbiter.lastCall, BluetoothError(.failed))) == [])
        #expect(!arbiter.isDiscovering)
        #expect(!arbiter.isBusy)
    }

    @Test func filterMergingAndAdmission() {
        let merged = DiscoveryFilter.merged([
            DiscoveryFilter(services: [heartRate], rssiThreshold: -80),
            DiscoveryFilter(services: [battery], rssiThreshold: -60),
        ])
        #expect(merged == DiscoveryFilter(services: [heartRate, battery], rssiThreshold: -80))
        let filter = DiscoveryFilter(services: [heartRate], rssiThreshold: -70)
        #expect(filter.admits(AdvertisementData(serviceUUIDs: [heartRate]), rssi: -60))
        #expect(!filter.admits(AdvertisementData(serviceUUIDs: [heartRate]), rssi: -75))
        #expect(!filter.admits(AdvertisementData(serviceUUIDs: [battery]), rssi: -60))
        #expect(DiscoveryFilter.merged([DiscoveryFilter]()) == DiscoveryFilter())
    }

    /// One scanner, its filter set, and `StartDiscovery` in flight.
    private func starting() -> Arbiter {
        var arbiter = Arbiter()
        _ = arbiter.handle(.adapterAvailable(true))
        _ = arbiter.handle(.scannerAdded(1, DiscoveryFilter()))
        _ = arbiter.handle(.callSucceeded(arbiter.lastCall))
        return arbiter
    }

    private func running(_ scanners: [Int: DiscoveryFilter]) -> Arbiter {
        var arbiter = Arbiter()
        _ = arbiter.handle(.adapterAvailable(true))
        for (id, filter) in scanners.sorted(by: { $0.key < $1.key }) {
            _ = arbiter.handle(.scannerAdded(id, filter))
        }
        while arbiter.isBusy { _ = arbiter.handle(.callSucceeded(arbiter.lastCall)) }
        return arbiter
    }
}
