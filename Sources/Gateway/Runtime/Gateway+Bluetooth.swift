import Foundation
import MQTT

extension Gateway {
    /// What ``BLELink`` is given instead of the gateway (``BLELink/Host``): its events go to
    /// ``linkEvent(_:number:)``, its questions to the gateway's methods, the known peripherals to the state
    /// database. The gateway holds the link, so each closure holds the gateway weakly.
    func linkHost() -> BLELink.Host {
        let state = self.state
        return BLELink.Host(
            report: { [weak self] event, number in await self?.linkEvent(event, number: number) },
            seen: { [weak self] id, address, rssi, persistent in
                await self?.deviceSeen(id, address: address, rssi: rssi, persistent: persistent)
            },
            assignMatch: { [weak self] address, template in
                guard let self else { return template }
                return await self.assignMatch(address, template: template)
            },
            addAutoDevice: { [weak self] address, decoder, name in
                await self?.addAutoDevice(address, decoder: decoder, name: name)
            },
            knownPeripherals: { try await state.knownPeripherals() },
            remember: { try await state.remember($0) })
    }

    /// Every event ``BLELink`` reports, handled here (one hop onto the actor, as a method call was).
    /// A numbered event (the link's own) starts after every event the link numbered before it
    /// (``ArrivalOrder``): on their way here through Swift's pool, one of the link's tasks' events
    /// could overtake another's (`bridge/health` kept an older `adapter_missing`, 2026-12-05).
    func linkEvent(_ event: BLELink.Event, number: Int? = nil) async {
        if let number {
            if !linkEventOrder.isTurn(number) {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    linkEventOrder.park(number, waiter)
                }
            }
            // The next one (if it is here) runs once this handler first awaits, as it would have.
            linkEventOrder.went(number)?.resume()
        }
        switch event {
        case .adapterPowered, .connected, .disconnected, .health:
            // Bursts: every object of a device or of BlueZ went and came back (``FreeMemorySchedule``).
            freeMemory.burst(at: clock.now)
        case .heard, .vanished, .connectFailed, .unseen, .described, .pollFinished: break
        }
        switch event {
        case .health(let health): await bluetoothHealthChanged(health)
        case .adapterPowered(let powered): await adapterPowered(powered)
        case .heard(let id, let rssi, let readings): await presenceHeard(id, rssi: rssi, readings: readings)
        case .vanished(let id): await deviceVanished(id)
        case .connected(let id, let services): await deviceConnected(id, services: services)
        case .connectFailed(let id, let error): await deviceConnectFailed(id, error: error)
        case .unseen(let id): await deviceUnseen(id)
        case .disconnected(let id, let expected): await deviceDisconnected(id, expected: expected)
        case .described(let id, let manufacturer, let model, let firmware):
            await deviceDescribed(id, manufacturer: manufacturer, model: model, firmware: firmware)
        case .pollFinished(let id): await poolEvent(.pollFinished(id))
        }
    }

    /// ``BLELink`` learnt something new about Bluetooth: log what to fix when it became unusable
    /// (or how it changed), update systemd's `STATUS=` (``ServiceStatus``), and publish the health
    /// at once so Home Assistant's "Bluetooth" problem sensor follows without waiting for the next
    /// interval.
    ///
    /// The health message carries the outbox figures of the last tick: reading them anew waits for
    /// the outbox thread (behind appends, which a slow disk or SQLite's busy handler can hold for
    /// seconds), and ``BLELink`` handles Bluetooth's changes one at a time, awaiting this, so the
    /// next change (the adapter gone after its power went off) waited too (issue 20).
    func bluetoothHealthChanged(_ health: BluetoothHealth) async {
        let previous = bluetooth
        bluetooth = health
        if health.problem != previous.problem || health.lastErrorKind != previous.lastErrorKind {
            if let advice = health.advice {
                logger.error(
                    "Bluetooth unavailable: \(advice)",
                    [
                        ("problem", health.problem?.rawValue ?? ""), ("adapter", health.adapter),
                        ("error", health.lastError ?? ""),
                    ])
            } else if health.isAvailable, !previous.isAvailable {
                logger.info(
                    "Bluetooth available", [("adapter", health.adapter), ("bluetoothd", health.bluezOwner ?? "")])
            }
        }
        updateStatus { $0.bluetooth = health }
        if health.problem != previous.problem { await publishHealth(lastPublisherStats) }
    }
}
