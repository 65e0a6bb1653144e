import BlueZ
import Bluetooth

extension BLELink {
    /// Services resolved (the tree is `GetManagedObjects`' answer) without an attribute the configuration
    /// needs: takes ``GATTCacheRecovery``'s next step. A reconnect happens in place (disconnect, connect
    /// within `timeout`; the caller resolves again). Forgetting the device and giving up throw the connect
    /// failure to report (the pool connects again on its schedule, by then to the rediscovered device); the
    /// failure says what happened and, when the gateway gives up, what the user must do.
    func recoverMissing(
        _ id: String, _ missing: CommandFailure, peripheral: Peripheral, central: CentralManager, timeout: Duration
    ) async throws {
        let address = peripheral.identifier.string
        let isBonded = await peripheral.isBonded
        let isPaired = await peripheral.isPaired
        let bonded = isBonded || isPaired
        var recovery = cacheRecovery[id] ?? GATTCacheRecovery()
        let decision = recovery.servicesMissing(bonded: bonded)
        cacheRecovery[id] = recovery
        switch decision {
        case .reconnect:
            logger.notice(
                "a configured GATT attribute is missing after services resolved; reconnecting once",
                [("device", id), ("reason", missing.message)])
            reconnectingInPlace.insert(id)
            defer { reconnectingInPlace.remove(id) }
            await central.disconnect(peripheral)
            try await central.connect(peripheral, timeout: timeout)
        case .forgetDevice:
            logger.warning(
                "a configured GATT attribute is still missing: BlueZ's cached GATT database of the device looks "
                    + "stale (it skips discovery while the database hash matches); removing the device from BlueZ "
                    + "so that the next connection discovers the database afresh",
                [("device", id), ("address", address), ("reason", missing.message)])
            await central.cancelConnection(peripheral)
            do {
                try await central.forget(peripheral)
            } catch {
                logger.warning("RemoveDevice failed", [("device", id), ("error", "\(error)")])
            }
            // Gone from BlueZ: the next advertisement brings the device (and a fresh Peripheral) back.
            if peripherals[id] === peripheral { peripherals[id] = nil }
            throw CommandFailure(
                .bleError,
                "\(missing.message); removed the device from BlueZ to drop its stale GATT cache, "
                    + "connecting again when it is next seen")
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
}
