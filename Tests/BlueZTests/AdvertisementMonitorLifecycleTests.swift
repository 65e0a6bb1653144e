import BlueZ
import Testing

/// The advertisement monitors' lifecycle with bluetoothd (doc/advertisement-monitor-api.txt).
@Suite struct AdvertisementMonitorLifecycleTests {
    typealias Lifecycle = AdvertisementMonitorLifecycle<String>

    @Test func registersWhenTheManagerIsThereAndIsReadyOnceEveryMonitorIsActive() {
        var lifecycle = Lifecycle(monitors: ["/m/0", "/m/1"])
        #expect(lifecycle.handle(.managerAvailable(false)) == [])
        #expect(lifecycle.handle(.managerAvailable(true)) == [.register])
        #expect(lifecycle.handle(.managerAvailable(true)) == [], "one registration at a time")
        // bluetoothd answers first, activates afterwards; this process may see Activate first.
        #expect(lifecycle.handle(.activated("/m/0")) == [])
        #expect(lifecycle.handle(.registerSucceeded) == [])
        #expect(lifecycle.handle(.activated("/other")) == [], "not ours")
        #expect(lifecycle.handle(.activated("/m/1")) == [.ready])
        #expect(lifecycle.phase == .registered)
        #expect(lifecycle.handle(.activated("/m/1")) == [], "ready only once")
    }

    @Test func devicesAreFollowedFromFoundToLost() {
        var lifecycle = Lifecycle(monitors: ["/m/0"])
        _ = lifecycle.handle(.managerAvailable(true))
        #expect(lifecycle.handle(.deviceFound("dev_A")) == [], "nothing active yet")
        _ = lifecycle.handle(.registerSucceeded)
        #expect(lifecycle.handle(.activated("/m/0")) == [.ready])
        // The first DeviceFound comes before bluetoothd's PropertiesChanged for that advertisement:
        // the device's cached properties are older, so it is followed but not reported.
        #expect(lifecycle.handle(.deviceFound("dev_A")) == [])
        #expect(lifecycle.follows("dev_A"), "its property changes are reported from now on")
        #expect(
            lifecycle.handle(.deviceFound("dev_A")) == [.report("dev_A")], "every advertisement in software filtering")
        #expect(lifecycle.handle(.deviceLost("dev_A")) == [])
        #expect(!lifecycle.follows("dev_A"))
        #expect(lifecycle.handle(.deviceFound("dev_A")) == [], "found again: its copy may be old again")
    }

    @Test func withTheControllerFilteringTheOnlyDeviceFoundIsReported() {
        var lifecycle = Lifecycle(monitors: ["/m/0"], controllerFiltering: true)
        _ = lifecycle.handle(.managerAvailable(true))
        _ = lifecycle.handle(.registerSucceeded)
        _ = lifecycle.handle(.activated("/m/0"))
        #expect(lifecycle.handle(.deviceFound("dev_A")) == [.report("dev_A")])
        #expect(lifecycle.follows("dev_A"))
    }

    @Test func aReleaseBeforeActivationOrARefusedRegistrationFails() {
        var released = Lifecycle(monitors: ["/m/0", "/m/1"])
        _ = released.handle(.managerAvailable(true))
        _ = released.handle(.registerSucceeded)
        _ = released.handle(.activated("/m/0"))
        let actions = released.handle(.released("/m/1"))
        guard case .failed(let reason)? = actions.first else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(reason.contains("/m/1") && reason.contains("without activating it"))
        #expect(released.phase == .failed)
        #expect(released.handle(.managerAvailable(true)) == [], "a failure stays")

        var refused = Lifecycle(monitors: ["/m/0"])
        _ = refused.handle(.managerAvailable(true))
        #expect(
            refused.handle(.registerFailed("org.bluez.Error.AlreadyExists")) == [
                .failed("RegisterMonitor failed: org.bluez.Error.AlreadyExists")
            ])
    }

    @Test func bluetoothdGoingAndComingBackRegistersAgainWithoutAnotherReady() {
        var lifecycle = Lifecycle(monitors: ["/m/0"])
        _ = lifecycle.handle(.managerAvailable(true))
        _ = lifecycle.handle(.registerSucceeded)
        #expect(lifecycle.handle(.activated("/m/0")) == [.ready])
        _ = lifecycle.handle(.deviceFound("dev_A"))
        #expect(lifecycle.handle(.managerAvailable(false)) == [])
        #expect(lifecycle.phase == .waitingForManager)
        #expect(!lifecycle.follows("dev_A"), "the registration went with bluetoothd")
        #expect(lifecycle.handle(.managerAvailable(true)) == [.register])
        _ = lifecycle.handle(.registerSucceeded)
        #expect(lifecycle.handle(.activated("/m/0")) == [])
        #expect(lifecycle.handle(.released("/m/0")) == [.released("/m/0")], "after ready: logged, not fatal")
    }

    @Test func stopUnregistersOnlyWhatWasRegistered() {
        var waiting = Lifecycle(monitors: ["/m/0"])
        #expect(waiting.handle(.stop) == [])
        var registered = Lifecycle(monitors: ["/m/0"])
        _ = registered.handle(.managerAvailable(true))
        _ = registered.handle(.registerSucceeded)
        #expect(registered.handle(.stop) == [.unregister])
        #expect(registered.handle(.managerAvailable(true)) == [], "nothing after stop")
    }
}
