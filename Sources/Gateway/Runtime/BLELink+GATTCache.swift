import BlueZ
import Bluetooth
import Configuration
import Timekeeping

extension BLELink {
    /// Services resolved (the tree is `GetManagedObjects`' answer) without an attribute the configuration
    /// needs: takes ``GATTCacheRecovery``'s next step, in place, and returns the peripheral to resolve again
    /// (after a forget, the rediscovered one). Waiting for late characteristics, a reconnect, and forgetting
    /// the device (`RemoveDevice`, then the next advertisement, then a connect with full discovery) all
    /// happen inside the connect task, so the pool sees one connect and adds no backoff. Giving up throws
    /// the connect failure to report, which says what happened and what the user must do.
    func recoverMissing(
        _ id: String, _ missing: CommandFailure, device: DeviceConfiguration, peripheral: Peripheral,
        central: CentralManager, timeout: Duration
    ) async throws -> Peripheral {
        let address = peripheral.identifier.string
        let isBonded = await peripheral.isBonded
        let isPaired = await peripheral.isPaired
        let evidence = GATTCacheRecovery.Evidence(
            bonded: isBonded || isPaired, cacheReused: await peripheral.gattCacheReused,
            servedBefore: await servedBefore(id, device: device, address: address))
        var recovery = cacheRecovery[id] ?? GATTCacheRecovery()
        let decision = recovery.servicesMissing(evidence, at: clock.now)
        cacheRecovery[id] = recovery
        switch decision {
        case .awaitLate(let deadline):
            try await awaitLateCharacteristics(id, device: device, peripheral: peripheral, until: deadline)
            return peripheral
        case .reconnect:
            logger.notice(
                "a configured GATT attribute is missing after services resolved; reconnecting once",
                [("device", id), ("reason", missing.message)])
            reconnectingInPlace.insert(id)
            defer { reconnectingInPlace.remove(id) }
            await central.disconnect(peripheral)
            try await central.connect(peripheral, timeout: timeout)
            return peripheral
        case .forgetDevice:
            let cause =
                evidence.cacheReused
                ? "BlueZ resolved its cached GATT database of the device unchanged (it skips discovery while the "
                    + "database hash matches), and that copy lacks it"
                : "BlueZ's cached GATT database of the device looks stale (it skips discovery while the database "
                    + "hash matches)"
            logger.warning(
                "a configured GATT attribute is missing: \(cause); removing the device from BlueZ so that the next "
                    + "connection discovers the database afresh",
                [("device", id), ("address", address), ("reason", missing.message)])
            return try await forgetAndRediscover(
                id, missing, peripheral: peripheral, central: central, timeout: timeout)
        case .giveUp(.staleBondedCache):
            let message =
                "\(missing.message) although the device is bonded: BlueZ's cached GATT database of \(address) looks "
                + "stale, and the gateway does not remove a bond by itself. Fix: `bluetoothctl remove \(address)`, "
                + "then pair the device again (docs/deploy.md, troubleshooting)"
            logger.error("stale GATT cache of a bonded device", [("device", id), ("reason", message)])
            throw CommandFailure(.bleError, message)
        case .giveUp(.missingAfterRediscovery):
            let message =
                "\(missing.message) even after BlueZ discovered its GATT database afresh: check the service and "
                + "characteristic in the device's configuration"
            logger.error("configured GATT attribute missing", [("device", id), ("reason", message)])
            throw CommandFailure(.bleError, message)
        }
    }

    /// `RemoveDevice`, then waits (at most `timeout`) for discovery to report the device again and connects
    /// to it; BlueZ then has no cached copy and discovers the whole database.
    private func forgetAndRediscover(
        _ id: String, _ missing: CommandFailure, peripheral: Peripheral, central: CentralManager, timeout: Duration
    ) async throws -> Peripheral {
        // The link drop of the removal is part of the recovery, not a disconnection for the pool.
        reconnectingInPlace.insert(id)
        defer { reconnectingInPlace.remove(id) }
        let (found, waiter) = AsyncStream.makeStream(of: Peripheral.self, bufferingPolicy: .bufferingNewest(1))
        rediscoveryWaiters[id] = waiter
        defer {
            waiter.finish()
            rediscoveryWaiters[id] = nil
        }
        do {
            try await central.forget(peripheral)
        } catch {
            logger.warning("RemoveDevice failed", [("device", id), ("error", "\(error)")])
        }
        // Gone from BlueZ: the next advertisement brings the device back as a fresh Peripheral.
        if peripherals[id] === peripheral { peripherals[id] = nil }
        let resumeScan = discoveryPaused
        if resumeScan { setDiscoveryPaused(false) }
        defer { if resumeScan { setDiscoveryPaused(true) } }
        if peripherals[id] == nil || peripherals[id] === peripheral {
            // Discovery can still report the removed peripheral while bluetoothd removes it (an RSSI
            // update): that is not the device found again. Taking it as such failed the connect 2.8 s
            // after the removal ("not seen again within 30 s"), and the pool's backoff came on top
            // (VM tier, 2026-12-02).
            await Deadline.run(until: clock.now + timeout, clock: AnyBridgeClock(clock)) {
                for await reported in found where reported !== peripheral { return }
            }
        }
        guard let fresh = peripherals[id], fresh !== peripheral else {
            throw CommandFailure(
                .bleError,
                "\(missing.message); removed the device from BlueZ to drop its stale GATT cache, and it was not "
                    + "seen again within \(timeout); connecting again when it is next seen")
        }
        try await central.connect(fresh, timeout: timeout)
        return fresh
    }
}
