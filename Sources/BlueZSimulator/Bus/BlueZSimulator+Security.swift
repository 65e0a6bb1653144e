import DBus

/// Raising a link's security when the peer refuses an operation for want of it, as bluetoothd 5.66 does.
///
/// On an ATT error response "Insufficient Authentication" or "Insufficient Encryption" to a request,
/// bluetoothd's ATT layer (`change_security` in `src/shared/att.c`) raises the channel's security level
/// (`BT_SECURITY` on the L2CAP socket) and puts the request back at the head of its queue. The kernel then
/// pairs (SMP); its questions reach bluetoothd's *default* agent (`new_auth` in `src/device.c` takes the
/// agent of a running `Pair` call, else `agent_get(NULL)`). When pairing succeeds `Paired` (and `Bonded`)
/// become true and the request is sent again and answered; when it fails the request is sent again at the
/// old level, the peer refuses it again and the D-Bus call gets `create_gatt_dbus_error`'s mapping:
/// `NotPermitted` "Not paired".
///
/// Modelled: Just Works devices pair without asking anyone (the kernel does not ask user space about Just
/// Works when it initiates), passkey devices ask the default agent `RequestPasskey` (a wrong passkey, a
/// rejection, no agent or one without a keyboard fail the pairing), numeric-comparison devices ask it
/// `RequestConfirmation` (an agent that cannot show and confirm, or that rejects, fails it), and a device
/// that refuses pairing (`refuses_pairing`) fails it after a delay and drops the link. Operations that need security while a
/// pairing of that device runs (another raise or a `Pair` call) wait for it and are then retried once.
extension BlueZSimulator {
    /// The error a peer's "insufficient authentication/encryption" answer becomes on D-Bus.
    static let notPaired = BlueZError.att(.insufficientAuthentication).dbus

    /// Runs `operation`, the work of `call`; when the peer refuses it for want of security, raises the
    /// link's security and runs it once more.
    func withSecurity<T>(_ key: CharacteristicKey, _ call: DBusMethodCall, _ operation: () throws -> T) async throws
        -> T
    {
        do {
            return try operation()
        } catch let error as DBusError where error == Self.notPaired {
            guard try await raiseSecurity(key.address, for: call) else { throw error }
            return try operation()
        }
    }

    /// Pairs the connected, unpaired device `key` through the default agent (or waits for the pairing that
    /// already runs) for `call`; returns whether it is paired afterwards. Throws the error the operation
    /// gets when the peer refuses the pairing (``refusePairing(_:answering:)``).
    func raiseSecurity(_ key: String, for call: DBusMethodCall) async throws -> Bool {
        guard let device = devices[key], device.connected else { return false }
        if device.paired { return true }
        if device.bonding {
            await waitForPairing(key)
            return devices[key]?.paired ?? false
        }
        guard case .begin = devices[key]!.beginPairing() else { return false }
        if devices[key]!.spec.refusesPairing {
            switch scenario.adapter.refusedRaiseAnswer {
            case .attError:
                await refusePairing(key, answering: call)
                throw BlueZError.att(.unlikelyError).dbus
            case .none:
                await refusePairingUnanswered(key)
                // What dbus-daemon tells a caller still waiting when bluetoothd leaves the bus.
                throw DBusError(
                    name: .noReply, message: "Message recipient disconnected from message bus without replying")
            }
        }
        log.info("raising security: pairing through the default agent", [("device", key)])
        var success = false
        do {
            let agent = agents.defaultOwner.flatMap { agents.agents[$0] }
            try await authenticate(key, agent: agent)
            success = devices[key]?.bonding == true
        } catch {
            log.info("security raise failed", [("device", key), ("error", "\(error)")])
        }
        finishPairing(key, success: success)
        return devices[key]?.paired ?? false
    }

    /// A peer that refuses pairing (``ScenarioDevice/refusesPairing``) answers the pairing started for it
    /// after the timing's `pairing_refusal_delay`, and the link drops (the pairing fails with it), as
    /// bluetoothd 5.66 showed in the VM tier: bonding status 0x05 then 0x0e in its log, the request that
    /// raised security answered `Failed` "Operation failed with ATT error: 0x0e", the device left unpaired.
    /// The caller answers `call` with the error when this returns; the link drops once that answer is
    /// queued on the bus, as bluetoothd's answer comes before the disconnection. (A 5 ms timer used to
    /// drop it: on a loaded machine the drop then went out before the answer, and the gateway answered
    /// `device_unavailable` instead of `not_paired`; `make stress`, 2026-12-04.)
    func refusePairing(_ key: String, answering call: DBusMethodCall) async {
        log.info("the device refuses pairing", [("device", key), ("after", "\(timing.pairingRefusalDelay)")])
        let generation = self.generation
        // Real delay: the simulated peer's time to refuse (a scenario timing).
        try? await Task.sleep(for: timing.pairingRefusalDelay)
        guard generation == self.generation, devices[key]?.connected == true else { return }
        let attempt = connectAttempts[key]
        afterReply(call) { simulator in
            guard await simulator.connectAttempts[key] == attempt else { return }
            await simulator.linkDown(key, pendingError: nil)
            await simulator.pairingRefused(key)
        }
    }

    /// A peer refusing the pairing a security raise started, as bluetoothd 5.82 handles it (the adapter's
    /// `refused_raise_answer` `"none"`): the link drops after the timing's `pairing_refusal_delay` and the
    /// request that raised security is never answered (VM tier, 2026-12-07: the link down 0.14 s after the
    /// read, no answer until the caller's 30 s time-out, the device object removed as a temporary one
    /// about 30 s after the drop). Returns only when the simulator stops or restarts.
    func refusePairingUnanswered(_ key: String) async {
        log.info("the device refuses pairing; the request stays unanswered", [("device", key)])
        let generation = self.generation
        // Real delay: the simulated peer's time to refuse (a scenario timing).
        try? await Task.sleep(for: timing.pairingRefusalDelay)
        guard generation == self.generation else { return }
        if devices[key]?.connected == true {
            await linkDown(key, pendingError: nil)
            pairingRefused(key)
        }
        guard generation == self.generation else { return }
        await withCheckedContinuation { unansweredRequests.append($0) }
    }

    /// The refusal has dropped the link: the device becomes temporary (``DeviceState/pairingRefused(now:)``).
    func pairingRefused(_ key: String) {
        devices[key]?.pairingRefused(now: clock.now)
    }

    /// Returns when the pairing of `key` that runs now ends (success, failure, cancel or link loss).
    func waitForPairing(_ key: String) async {
        guard devices[key]?.bonding == true else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pairingWaiters[key, default: []].append(continuation)
        }
    }

    /// A pairing of `key` ended: operations waiting for it go on.
    func pairingEnded(_ key: String) {
        for waiter in pairingWaiters.removeValue(forKey: key) ?? [] { waiter.resume() }
    }

    /// The agent's part of pairing: nothing for Just Works, the passkey for passkey devices, a confirmation of
    /// the shown number for numeric-comparison devices. Throws the error `Pair` answers with.
    func authenticate(_ key: String, agent: AgentRegistry.Agent?) async throws {
        switch devices[key]!.spec.pairing {
        case .none, .justWorks: return
        case .passkey: try await requestPasskey(key, agent: agent)
        case .numericComparison: try await requestConfirmation(key, agent: agent)
        }
    }
}
