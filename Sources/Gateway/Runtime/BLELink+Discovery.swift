import BlueZ
import Bluetooth
import Configuration
import Decoders
import Foundation
import JSON
import TaskScope
import Timekeeping

extension BLELink {
    // MARK: Discovery

    func startScan() {
        // Listen-only scanning goes through advertisement monitors (``startPassiveScan()``), never a discovery session.
        guard scanTask == nil, !discoveryPaused, configuration.bluetooth.scan.mode == .active, let central else {
            return
        }
        let scan = configuration.bluetooth.scan
        let intake = self.intake
        let attach = attachment()
        scanTask = scope.spawnCancellable { [weak self] in
            do {
                let discoveries = try await central.scan(
                    services: scan.services, allowDuplicates: scan.duplicates, rssiThreshold: scan.rssiMin)
                await intake.follow(discoveries, attach: attach)
                // The central ends a scan whose start failed for good (it logs why).
                guard !Task.isCancelled else { return }
                await self?.scanFailed(BluetoothError(.failed, "the discovery session ended"))
            } catch {
                await self?.scanFailed(error)
            }
        }
    }

    func setDiscoveryPaused(_ paused: Bool) {
        discoveryPaused = paused
        if paused {
            scanTask?.cancel()
            scanTask = nil
        } else if powered {
            startScan()
        }
    }

    /// How the advertisement intake gives the link what it found (``AdvertisementIntake/Attach``).
    func attachment() -> AdvertisementIntake.Attach {
        { [weak self] id, peripheral, persistence in
            await self?.advertised(id, peripheral: peripheral, persistence: persistence)
        }
    }

    /// Configured or automatic device `id` advertised (``AdvertisementIntake``): `peripheral` is the
    /// one to connect to, and a forgotten device's recovery waiting for it gets it. When
    /// `persistence`: whether BlueZ keeps its object (paired or trusted; shared-broker mode's
    /// candidacies ask), two calls into the peripheral, on this thread.
    func advertised(_ id: String, peripheral: Peripheral, persistence: Bool) async -> Bool {
        peripherals[id] = peripheral
        rediscoveryWaiters[id]?.yield(peripheral)
        guard persistence else { return false }
        if await peripheral.isPaired { return true }
        return await peripheral.isTrusted
    }

    /// BlueZ removed the object of the device at `address` (``CentralManager/deviceRemovals``):
    /// the configured devices it was are no longer heard (their candidacies may end).
    func deviceObjectRemoved(_ address: BluetoothAddress) async {
        for id in peripherals.keys.sorted() where peripherals[id]?.identifier == address {
            await report(.vanished(id))
        }
    }

    /// Drops advertisers not seen for a minute (``AdvertisementIntake/pruneSeen()``, off the link's thread).
    nonisolated func pruneSeen() async {
        await intake.pruneSeen()
    }

    /// `bridge/request/scan`: advertisers seen during the next `duration` (``AdvertisementIntake``).
    nonisolated func scanSnapshot(for duration: Duration) async -> JSONValue {
        await intake.scanSnapshot(for: duration)
    }

    /// State restoration: peripherals known from earlier runs are usable at once, without a scan.
    func restoreKnownPeripherals() async {
        // Claimed before the first suspension: start() and the powered state can both be here.
        guard !restored, let central else { return }
        restored = true
        guard let known = try? await host.knownPeripherals() else {
            restored = false
            return
        }
        let wanted = known.filter { configuration.device(id: $0.deviceID) != nil }
        let addresses = wanted.compactMap { BluetoothAddress($0.address) }
        let restored = await central.retrievePeripherals(withIdentifiers: addresses)
        for peripheral in restored {
            guard let entry = wanted.first(where: { $0.address == peripheral.identifier.string }) else { continue }
            peripherals[entry.deviceID] = peripheral
            logger.info("restored known peripheral", [("device", entry.deviceID), ("address", entry.address)])
            _ = await host.seen(entry.deviceID, entry.address, nil, false)
        }
    }
}
